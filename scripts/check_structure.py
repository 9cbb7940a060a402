#!/usr/bin/env python3
"""The tree's size and layering targets, checked from the sources alone.

  python3 scripts/check_structure.py [ROOT] [--list]
  python3 scripts/check_structure.py --self-test   plants each breach in a scratch tree and expects it caught

Checks, over every tracked C++/CUDA source (.cpp .hpp .h .cu .cuh .inc) and Python script:
  * no file over 500 lines;
  * no function over 100 lines (C++/CUDA: from the first line of its signature to its closing brace;
    a test body counts as a function);
  * no function in tools/cmd_*.cpp over 60 lines (a command parses, makes one call, prints);
  * the floors above the algorithms (autotune/, net/, train/, dist/, report/, bench/) name no algorithm
    ("cpu.im2col_gemm"), compare no family with a literal (family() == "fft", or any literal that is a family's name) and cast to
    no algorithm class: each algorithm describes itself through the Algorithm interface.

Prints one line per breach ("FILE:LINE: what") and exits 1 if there is any, 0 otherwise; --list also
prints the ten longest files and functions. Exit 2 on a bad argument.
"""
import os
import re
import subprocess
import sys

FILE_LIMIT = 500
FUNCTION_LIMIT = 100
COMMAND_LIMIT = 60
CPP_EXT = (".cpp", ".hpp", ".h", ".cu", ".cuh", ".inc")
TUNER_FLOORS = ("autotune/", "net/", "train/", "dist/", "report/", "bench/")
FAMILIES = {"reference", "gemm", "implicit_gemm", "direct", "depthwise", "winograd", "fft"}
ALGO_NAME = re.compile(r'"(?:cpu|cuda|cudnn|onednn|user)\.[a-z0-9_]+"')
FAMILY_CALL = re.compile(r'\bfamily\s*\(\s*\)\s*[!=]=\s*"|"\s*[!=]=\s*[\w.>-]*family\s*\(\s*\)')
STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
DYNAMIC_CAST = re.compile(r"dynamic_cast\s*<\s*(?:const\s+)?([A-Za-z_][A-Za-z_0-9:]*)")
TYPE_BLOCK = re.compile(r"^(?:template\s*<.*>\s*)?(?:namespace|class|struct|union|enum)\b|^extern\s*\"C\"", re.S)


def blank_code(text, keep_strings=False):
    """The text with comments, string/char literals (unless keep_strings) and preprocessor lines blanked
    (newlines kept)."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            # a preprocessor line, continuations included
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c == "\n":
            out.append(c)
            at_line_start = True
            i += 1
            continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append('"' + "".join("\n" if ch == "\n" else " " for ch in text[i + 1:end - 1]) + '"')
            i = end
        elif c in "\"'":
            if c == "'" and i > 0 and (text[i - 1].isalnum()) or keep_strings and c == "'":
                out.append(c)  # a digit separator (1'000)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            if keep_strings:
                out.append(text[i:j + 1])
            else:
                out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(name, first line, length in lines) of every function body in C++ text."""
    code = blank_code(text)
    found = []
    stack = []          # kinds of the open braces: "type", "function", "other"
    header_start = 0    # where the text since the last ; { } begins
    line_of = []
    line = 1
    for ch in code:
        line_of.append(line)
        if ch == "\n":
            line += 1
    for i, ch in enumerate(code):
        if ch == "{":
            if any(k != "type" for k in stack):
                stack.append("other")
            else:
                header = code[header_start:i].strip()
                if TYPE_BLOCK.match(header) or header.startswith(("public:", "private:", "protected:")) and \
                        TYPE_BLOCK.match(header.split(":", 1)[1].strip()):
                    stack.append("type")
                elif "(" in header and not header.endswith(("=", ",", "return")):
                    start = header_start + (len(code[header_start:i]) - len(code[header_start:i].lstrip()))
                    name = re.sub(r"\s+", " ", header.split("(")[0]).split(" ")[-1]
                    stack.append(("function", name, line_of[start]))
                else:
                    stack.append("other")
            header_start = i + 1
        elif ch == "}":
            if stack:
                top = stack.pop()
                if isinstance(top, tuple):
                    _, name, first = top
                    found.append((name, first, line_of[i] - first + 1))
            header_start = i + 1
        elif ch == ";":
            header_start = i + 1
    return found


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True, check=True).stdout
        return [f for f in out.splitlines() if os.path.isfile(os.path.join(root, f))]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
            files += [os.path.relpath(os.path.join(d, x), root) for x in names]
        return files


def algorithm_classes(root, files):
    names = set()
    for f in files:
        if f.startswith("algorithms/") and f.endswith((".hpp", ".h", ".cuh")):
            with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
                names.update(re.findall(r"\b(?:class|struct)\s+([A-Z][A-Za-z0-9_]*)\s*(?:final\s*)?[:{]", fh.read()))
    return names


def self_test():
    """Each planted breach is reported, and a clean tree passes."""
    import contextlib
    import io
    import tempfile
    body = "\n".join("  x += %d;" % i for i in range(101))
    plants = {
        "core/long.cpp": ("int a;\n" * 501, "501 lines"),
        "core/fn.cpp": ("int f(int x) {\n" + body + "\n  return x;\n}\n", "function f is 104 lines"),
        "tools/cmd_x.cpp": ("int cmd_x(int x) {\n" + body[:61 * 13] + "\n  return x;\n}\n", "(at most 60)"),
        "autotune/n.cpp": ('const char* n = "cpu.direct";\n', 'names the algorithm "cpu.direct"'),
        "train/f.cpp": ('bool f(const A& a) { return a.family() == "fft"; }\n', "family() with a literal"),
        "bench/c.cpp": ("void f(const Algorithm* a) { auto* o = dynamic_cast<const MyAlgo*>(a); }\n",
                        "casts to the algorithm class MyAlgo"),
        "algorithms/my.hpp": ("class MyAlgo : public Algorithm {};\n", None),
    }
    ok = True
    with tempfile.TemporaryDirectory() as d:
        for rel, (text, _) in plants.items():
            os.makedirs(os.path.join(d, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(d, rel), "w") as fh:
                fh.write(text)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            rc = main([d])
        for rel, (_, expect) in plants.items():
            if expect and not any(line.startswith(rel) and expect in line for line in out.getvalue().splitlines()):
                print(f"self-test: {rel}: '{expect}' not reported")
                ok = False
        if rc != 1:
            print(f"self-test: exit {rc} with breaches planted (expected 1)")
            ok = False
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "autotune"))
        with open(os.path.join(d, "autotune", "ok.cpp"), "w") as fh:
            fh.write("// names \"cpu.direct\" in a comment only\nint f(int x) { return x; }\n")
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            if main([d]) != 0:
                print("self-test: a clean tree was reported")
                ok = False
    print("check_structure self-test: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    args = [a for a in argv if not a.startswith("--")]
    flags = [a for a in argv if a.startswith("--")]
    if len(args) > 1 or any(f not in ("--list",) for f in flags):
        print("error: usage: check_structure.py [ROOT] [--list] | --self-test", file=sys.stderr)
        return 2
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    if not os.path.isdir(root):
        print(f"error: {root}: not a folder", file=sys.stderr)
        return 2
    files = [f for f in tracked_files(root) if f.endswith(CPP_EXT + (".py",)) and not f.startswith("docs/results/")]
    classes = algorithm_classes(root, files)
    breaches, sizes, lengths = [], [], []
    for f in sorted(files):
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        n = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        sizes.append((n, f))
        if n > FILE_LIMIT:
            breaches.append(f"{f}:1: {n} lines (at most {FILE_LIMIT})")
        if not f.endswith(CPP_EXT):
            continue
        limit = COMMAND_LIMIT if re.match(r"tools/cmd_[^/]*\.cpp$", f) else FUNCTION_LIMIT
        for name, first, length in functions(text):
            lengths.append((length, f"{f}:{first}", name))
            if length > limit:
                breaches.append(f"{f}:{first}: function {name} is {length} lines (at most {limit})")
        if f.startswith(TUNER_FLOORS):
            code = blank_code(text)
            lines = blank_code(text, keep_strings=True).split("\n")
            for i, (raw, blank) in enumerate(zip(lines, code.split("\n")), 1):
                for m in ALGO_NAME.finditer(raw):
                    breaches.append(f"{f}:{i}: names the algorithm {m.group(0)}")
                if FAMILY_CALL.search(raw):
                    breaches.append(f"{f}:{i}: compares an algorithm's family() with a literal")
                for m in STRING.finditer(raw):
                    if m.group(1) in FAMILIES:
                        breaches.append(f"{f}:{i}: compares or names the family \"{m.group(1)}\"")
                for m in DYNAMIC_CAST.finditer(blank):
                    if m.group(1).split("::")[-1] in classes:
                        breaches.append(f"{f}:{i}: casts to the algorithm class {m.group(1)}")
    for b in breaches:
        print(b)
    if "--list" in flags:
        print("longest files:")
        for n, f in sorted(sizes, reverse=True)[:10]:
            print(f"  {n:5d} {f}")
        print("longest functions:")
        for n, where, name in sorted(lengths, reverse=True)[:10]:
            print(f"  {n:5d} {where} {name}")
    print(f"check_structure: {len(breaches)} breach(es) in {len(files)} files", file=sys.stderr)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
