#!/usr/bin/env python3
"""Checks the one-way arrows of cmake/layering.txt against the tree's includes.

Every C and C++ file under the folders the rules name must belong to a part, and
every #include "..." that names a file of the tree must be allowed by an arrow of
the including file's part. Prints one line per include that runs against them
(file:line: the include, the parts, the arrows that part has) and exits 1.

Usage: python3 cmake/check_layering.py [SOURCE_DIR] [--rules FILE] [--stamp FILE]
       python3 cmake/check_layering.py --arrows    (prints the arrows of the libraries
                                                   and programs, checks nothing)
"""

import argparse
import fnmatch
import os
import re
import sys

SOURCE_SUFFIXES = (".c", ".h", ".cpp", ".cc", ".hpp", ".inc")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
INTERNAL = ".internal"


class Rules:
    def __init__(self, path):
        self.patterns = []  # (pattern, part)
        self.arrows = {}  # part -> parts and file paths, in the order written
        self.path = path
        with open(path, encoding="utf-8") as f:
            for number, raw in enumerate(f, 1):
                line = raw.split("#", 1)[0].strip()
                if not line:
                    continue
                words = line.split()
                if words[0] == "part" and len(words) >= 3:
                    for pattern in words[2:]:
                        self.patterns.append((pattern, words[1]))
                elif len(words) >= 2 and words[1] == "->":
                    targets = self.arrows.setdefault(words[0], [])
                    targets += [t for t in words[2:] if t not in targets]
                else:
                    sys.exit(f"{path}:{number}: neither 'part NAME PATH...' nor 'NAME -> NAME...': {raw.strip()}")
        parts = {part for _, part in self.patterns}
        for part, targets in self.arrows.items():
            for target in list(targets) + [part]:
                if "/" not in target and target not in parts:
                    sys.exit(f"{path}: arrow of {part} names {target}, which is no part")
        self.roots = sorted({pattern.split("/", 1)[0] for pattern, _ in self.patterns})

    def part_of(self, rel):
        best, best_len = None, -1
        for pattern, part in self.patterns:
            if pattern.endswith("/"):
                hit = rel.startswith(pattern)
            else:
                hit = fnmatch.fnmatchcase(rel, pattern) and "/" not in rel[len(pattern.rsplit("/", 1)[0]) + 1 :]
            if hit and len(pattern) > best_len:
                best, best_len = part, len(pattern)
        return best

    def owner(self, part):
        """The part whose internal folder this is (provider for provider.internal)."""
        return part[: -len(INTERNAL)] if part.endswith(INTERNAL) else part

    def allowed(self, part, target_part, target_rel):
        if part is None or target_part is None:
            return True
        owner = self.owner(part)
        if self.owner(target_part) == owner:
            return True  # a part's own files, its internal folder included
        arrows = self.arrows.get(owner, [])
        return target_part in arrows or target_rel in arrows


def source_files(root, rules):
    for top in rules.roots:
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.relpath(os.path.join(folder, name), root)


def resolve(root, rel, include):
    """The tree's file an include names (beside the includer first, as the
    compiler looks), or None for a header from outside the tree."""
    for base in (os.path.dirname(rel), ""):
        candidate = os.path.normpath(os.path.join(base, include))
        if not candidate.startswith("..") and os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source_dir", nargs="?", default=os.path.dirname(here))
    ap.add_argument("--rules", default=None)
    ap.add_argument("--stamp", default=None, help="touched when the check passes")
    ap.add_argument("--arrows", action="store_true", help="print the arrows of the libraries and programs (not tests/) and stop")
    args = ap.parse_args()
    root = os.path.abspath(args.source_dir)
    rules_path = args.rules or os.path.join(root, "cmake", "layering.txt")
    rules = Rules(rules_path)
    rules_rel = os.path.relpath(rules_path, root)
    if args.arrows:
        for part, targets in rules.arrows.items():
            if not part.startswith("tests."):
                print(f"{part} -> {' '.join(targets) or 'nothing'}")
        return

    errors = []
    count = 0
    for rel in source_files(root, rules):
        part = rules.part_of(rel)
        if part is None:
            errors.append(f"{rel}: belongs to no part of {rules_rel} (add it to a part's 'part' line)")
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = resolve(root, rel, m.group(1))
                if target is None:
                    continue
                count += 1
                target_part = rules.part_of(target)
                if not rules.allowed(part, target_part, target):
                    owner = rules.owner(part)
                    arrows = " ".join(rules.arrows.get(owner, [])) or "nothing"
                    what = "an internal header of " + rules.owner(target_part) if target_part.endswith(INTERNAL) else target_part
                    errors.append(
                        f'{rel}:{number}: #include "{m.group(1)}" runs against the arrows: '
                        f"{part} may include {arrows} ({rules_rel}), not {what} ({target})"
                    )
    if errors:
        print(f"check_layering: {len(errors)} include(s) against {rules_rel}:", file=sys.stderr)
        for e in errors:
            print("  " + e, file=sys.stderr)
        sys.exit(1)
    if args.stamp:
        with open(args.stamp, "w", encoding="utf-8") as f:
            f.write(f"{count} includes checked\n")


if __name__ == "__main__":
    main()
