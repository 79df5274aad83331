/*
 * ui_key: the keys the console takes, as its widgets (the line editor, forms,
 * dialogs), its terminal layer and its loop all name them.
 *
 * - A key is an int: a Unicode code point for a character (control keys are the
 *   code points 1..31, Ctrl-A..Ctrl-Z being 1..26), the values of enum ui_key above
 *   Unicode for the rest. UI_KEY_NONE (0) is no key.
 * - Nothing here depends on the console's loop: widgets take keys without it.
 */
#ifndef RAMPART_UI_KEY_H
#define RAMPART_UI_KEY_H

/* Keys: Unicode code points for characters, these above them for the rest. */
enum ui_key {
    UI_KEY_NONE = 0,
    UI_KEY_CTRL_BASE = 0,      /* Ctrl-A..Ctrl-Z are 1..26 */
    UI_KEY_TAB = 9,
    UI_KEY_ENTER = 13,
    UI_KEY_ESC = 27,
    UI_KEY_BACKSPACE = 127,
    UI_KEY_SPECIAL = 0x110000, /* beyond Unicode */
    UI_KEY_UP, UI_KEY_DOWN, UI_KEY_LEFT, UI_KEY_RIGHT,
    UI_KEY_PGUP, UI_KEY_PGDN, UI_KEY_HOME, UI_KEY_END,
    UI_KEY_BTAB, UI_KEY_DEL, UI_KEY_INSERT,
    UI_KEY_F1, /* F1..F12 follow */
    UI_KEY_RESIZE = UI_KEY_F1 + 12
};

/* A key and what it does, for a key bar ("Tab" "next field"). */
typedef struct ui_key_hint {
    int key;
    const char *label;
} ui_key_hint;

#endif
