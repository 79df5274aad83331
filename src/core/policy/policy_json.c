/* policy_json: a decision as JSON (see policy_decision_json in rampart/policy.h). */
#include "rampart/policy.h"

/* `,"name":` with the style's separators; the first key has no comma. */
static void key(buf_t *b, policy_json_style style, const char *name, bool first)
{
    bool spaced = style == POLICY_JSON_SPACED;
    if (!first)
        buf_puts(b, spaced ? ", " : ",");
    buf_json_string(b, name);
    buf_puts(b, spaced ? ": " : ":");
}

static void text_or_null(buf_t *b, const char *s)
{
    if (s)
        buf_json_string(b, s);
    else
        buf_puts(b, "null");
}

static const char *boolean(bool v)
{
    return v ? "true" : "false";
}

bool policy_decision_json(buf_t *out, const char *ip, const char *policy_id,
                          const policy_decision *d, policy_json_style style)
{
    bool ruled = d->rule_id[0] != '\0';
    buf_puts(out, "{");
    key(out, style, "ip", true);
    buf_json_string(out, ip);
    key(out, style, "policy", false);
    buf_json_string(out, policy_id);
    key(out, style, "allowed", false);
    buf_puts(out, boolean(d->allowed));
    key(out, style, "policy_known", false);
    buf_puts(out, boolean(d->policy_known));
    key(out, style, "action", false);
    text_or_null(out, ruled ? model_action_name(d->action) : NULL);
    key(out, style, "cidr", false);
    text_or_null(out, ruled ? d->cidr : NULL);
    key(out, style, "synced", false);
    buf_puts(out, ruled ? boolean(d->synced) : "null");
    key(out, style, "rule_id", false);
    text_or_null(out, ruled ? d->rule_id : NULL);
    return buf_puts(out, "}");
}
