/*
 * Fuzz target: validate (CIDR and addresses, ids, ACL rules and whole ACLs, UTF-8
 * text and its lengths, RFC 3339 timestamps, URIs, the character namer). The
 * first byte picks the check, the rest is the text. Properties checked beyond
 * "no crash": a canonical CIDR is valid and its own canonical form; an address
 * accepted by validate_ip is accepted as /32 or /128; validate_text agrees with
 * walking the text by utf8_decode; every sequence utf8_decode accepts is the
 * shortest form of a scalar value (no overlong, no surrogate, <= U+10FFFF).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/utf8.h"
#include "rampart/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_cidr(const char *text)
{
    char canon[MODEL_CIDR_MAX + 1], again[MODEL_CIDR_MAX + 1];
    validate_prefix p, q;
    error_info err = {0};
    if (validate_cidr(text, &p, canon, sizeof canon, &err) != ERROR_OK)
        return;
    if (validate_cidr(canon, &q, again, sizeof again, &err) != ERROR_OK ||
        strcmp(canon, again) != 0 || memcmp(&p, &q, sizeof p) != 0)
        abort();
}

static void check_ip(const char *text)
{
    validate_prefix p;
    error_info err = {0};
    if (validate_ip(text, &p, &err) != ERROR_OK)
        return;
    char cidr[MODEL_CIDR_MAX + 8];
    snprintf(cidr, sizeof cidr, "%s/%u", text, p.bits);
    if (validate_cidr(cidr, NULL, NULL, 0, &err) != ERROR_OK)
        abort();
}

/* One sequence at `s`: its length, 0 when invalid; aborts on a decoded code
 * point that is not a scalar value in its shortest form. */
static size_t decode_checked(const char *s, size_t avail)
{
    uint32_t cp;
    int n = utf8_decode(s, avail, &cp);
    if (n <= 0)
        return 0;
    int shortest = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (n != shortest || (size_t)n > avail || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        abort();
    return (size_t)n;
}

static void check_text(const char *text, size_t len)
{
    bool walk_ok = true;
    for (size_t i = 0; i < len;) {
        size_t n = decode_checked(text + i, len - i);
        if (n == 0) {
            walk_ok = false;
            break;
        }
        i += n;
    }
    error_info err = {0};
    bool ok = validate_text(text, len, "text", &err) == ERROR_OK;
    if (ok != walk_ok)
        abort();
    if (len > 0 && validate_text(text, len - 1, "text", &err) == ERROR_OK)
        abort(); /* one byte over the limit */
    validate_description(text, &err);
    validate_metadata(text, &err);
    char name[32];
    validate_describe_char(text, name, sizeof name);
}

/* One ACL rule per line, checked one by one and as a whole. */
static void check_acl(char *text)
{
    char *rules[64];
    model_acl acl = {0, rules};
    error_info err = {0};
    for (char *line = text; line && acl.count < 64;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        validate_acl_rule(line, &err);
        rules[acl.count++] = line;
        line = nl ? nl + 1 : NULL;
    }
    validate_acl(&acl, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    size_t len = strlen(text);
    error_info err = {0};
    model_action action;
    static const char *const prefixes[] = {"ipr", "ipp", "cr", "usr", "bot", "op"};
    switch (data[0] % 10) {
    case 0: check_cidr(text); break;
    case 1: check_ip(text); break;
    case 2:
        for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
            validate_id(text, prefixes[i], "id", &err);
        validate_id_among(text, (const char *const[]){"usr", "bot"}, 2, "owner id", &err);
        validate_is_local_id(text);
        break;
    case 3: validate_acl_rule(text, &err); break;
    case 4: check_acl(text); break;
    case 5: check_text(text, len); break;
    case 6: validate_timestamp(text, "created_at", &err); break;
    case 7: validate_uri(text, "uri", &err); break;
    case 8: validate_action(text, &action, &err); break;
    default: {
        /* Text with NULs and no terminator in sight: only `avail` bytes are read. */
        size_t n = size - 1;
        char *raw = malloc(n ? n : 1);
        if (raw) {
            memcpy(raw, data + 1, n);
            for (size_t i = 0; i < n;) {
                size_t k = decode_checked(raw + i, n - i);
                i += k ? k : 1;
            }
            free(raw);
        }
        break;
    }
    }
    if (memchr(err.msg, '\0', sizeof err.msg) == NULL)
        abort();
    free(text);
    return 0;
}
