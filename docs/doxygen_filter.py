"""Doxygen input filter for switchyard's headers (docs/Doxyfile): a block of
// comment lines directly before a declaration becomes a /// documentation
comment, so the reference shows the comments the headers already have.
Comment text is kept as written: backslashes and at-signs are escaped so
Doxygen does not read them as commands."""

import re
import sys

comment = re.compile(r"^(\s*)//(?!/)\s?(.*)$")


def filter_lines(lines):
    out = []
    block = []  # (indent, text) of the pending // block

    def flush(documentation):
        for indent, text in block:
            if documentation:
                text = text.replace("\\", "\\\\").replace("@", "\\@")
                out.append(f"{indent}/// {text}\n".rstrip(" \n") + "\n" if text else f"{indent}///\n")
            else:
                out.append(f"{indent}// {text}\n")
        block.clear()

    for line in lines:
        m = comment.match(line)
        if m:
            block.append((m.group(1), m.group(2)))
            continue
        stripped = line.strip()
        # A block followed by a blank line, a preprocessor line or a closing
        # brace documents nothing (a file's opening comment, a note).
        flush(bool(stripped) and not stripped.startswith(("#", "}")))
        out.append(line)
    flush(False)
    return out


with open(sys.argv[1], encoding="utf-8") as f:
    sys.stdout.write("".join(filter_lines(f.readlines())))
