#!/usr/bin/env python3
"""Runs the fenced blocks of README.md and docs/*.md (scripts/doc_check.sh runs this
inside a throwaway PostgreSQL cluster, with the tree built and the extension
installed).

Each page runs in order in a work directory of its own, which holds links to the
tree's top-level entries (build/, scripts/, agent/, ...), so a page's commands run as
pasted from the top of a checkout; each page has a database of its own.

  ```sh / ```bash    run with bash -euo pipefail in the work directory; processes a
                     block leaves in the background are stopped at the page's end
  ```sql             run with psql (ON_ERROR_STOP) in the page's database
  ```cpp / ```c      compiled against the tree's headers and static agent; run when
                     it has a main (PFS_REGION=<work>/<name>.pfs)
  ```output          the output the block before it printed, compared line by line
                     (trailing blanks ignored)
  ```<other>         shown, not run: counted as untested

Markers, on the line before a fence (HTML comments, invisible on GitHub):
  <!-- untested: why -->     the block is not run
  <!-- file: NAME -->        the block is saved as NAME in the work directory (a C++
                             file is then compiled by the commands that follow, not here)
  <!-- doc_check: sh|sql: TEXT -->   run TEXT first, unseen by the reader (setup
                             a block needs that the page does not show)

Ends with `doc blocks: N run, M untested`; fails on any error, or when fewer than
80% of the blocks run.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_LANGS = {"sh", "bash", "sql", "cpp", "c++", "c"}
FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)\s*$")
MARK = re.compile(r"^<!--\s*(untested|file|doc_check)\s*:\s*(.*?)\s*-->\s*$", re.S)


class page_failed(Exception):
    pass


def blocks_of(path):
    """(line number, language, text, markers) for each fenced block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, marks, i = [], [], 0
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line)
        if m:
            fence, lang, start = m.group(1), m.group(2).lower(), i + 1
            body = []
            i += 1
            while i < len(lines) and lines[i].strip() != fence:
                body.append(lines[i])
                i += 1
            out.append((start, lang, "\n".join(body) + "\n", marks))
            marks = []
        elif line.startswith("<!--"):
            text = line
            while "-->" not in text and i + 1 < len(lines):
                i += 1
                text += "\n" + lines[i]
            mk = MARK.match(text)
            if mk:
                marks.append((mk.group(1), mk.group(2)))
        elif line.strip():
            marks = []
        i += 1
    return out


class page:
    def __init__(self, path, index):
        self.path = path
        self.rel = os.path.relpath(path, ROOT)
        self.work = tempfile.mkdtemp(prefix="pfs_doc.")
        os.chmod(self.work, 0o755)  # the server (user postgres) reads regions here
        for entry in os.listdir(ROOT):
            if not entry.startswith("."):
                os.symlink(os.path.join(ROOT, entry), os.path.join(self.work, entry))
        self.db = "doc_%d" % index
        subprocess.run(["createdb", self.db], check=True)
        self.groups = []
        self.last_output = None
        self.env = dict(os.environ, PGDATABASE=self.db, DOC_WORK=self.work)

    def fail(self, line, what, output=""):
        raise page_failed("%s:%d: %s\n%s" % (self.rel, line, what, output[-4000:]))

    def run(self, line, argv, stdin=None, timeout=600):
        # The output goes to a file, not a pipe: a process a block leaves in the
        # background keeps its stdout/stderr open, and a pipe would then never end.
        with tempfile.TemporaryFile(mode="w+") as out_file:
            proc = subprocess.Popen(argv, cwd=self.work, env=self.env,
                                    stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                    stdout=out_file, stderr=subprocess.STDOUT, text=True,
                                    start_new_session=True)
            self.groups.append(proc.pid)
            try:
                proc.communicate(stdin, timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                out_file.seek(0)
                self.fail(line, "timed out after %d s: %s" % (timeout, " ".join(argv)), out_file.read())
            out_file.seek(0)
            out = out_file.read()
        if proc.returncode != 0:
            self.fail(line, "exit status %d: %s" % (proc.returncode, " ".join(argv[:3])), out)
        self.last_output = out
        return out

    def sh(self, line, text):
        return self.run(line, ["bash", "-euo", "pipefail", "-c", text])

    def sql(self, line, text):
        return self.run(line, ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", "-"], stdin=text)

    def cpp(self, line, lang, text, name):
        is_c = lang == "c"
        name = name or "block_%d.%s" % (line, "c" if is_c else "cpp")
        src = os.path.join(self.work, name)
        with open(src, "w") as f:
            f.write(text)
        build = os.path.join(ROOT, "build")
        compiler = ["gcc", "-std=c11"] if is_c else ["g++", "-std=c++20"]
        flags = compiler + ["-O1", "-Wall", "-Werror", "-I", ROOT]
        if not re.search(r"\bint\s+main\s*\(", text):
            self.run(line, flags + ["-c", src, "-o", src + ".o"])
            return
        exe = os.path.splitext(src)[0]
        libs = [os.path.join(build, p) for p in
                ("agent/libpfs_agent.a", "agent/libpfs_region.a", "timers/libpfs_timers.a")]
        self.run(line, flags + [src, "-o", exe] + libs + ["-lstdc++", "-lm", "-pthread", "-ldl"])
        self.env["PFS_REGION"] = exe + ".pfs"
        try:
            self.run(line, [exe], timeout=120)
        finally:
            del self.env["PFS_REGION"]

    def close(self):
        for pgid in self.groups:
            try:
                os.killpg(pgid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        subprocess.run(["dropdb", "--if-exists", "--force", self.db], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run(["rm", "-rf", self.work], check=False)


def normalized(text):
    return [l.rstrip() for l in text.strip("\n").split("\n")]


def check_page(path, index, counts):
    p = page(path, index)
    try:
        for line, lang, text, marks in blocks_of(path):
            kinds = dict(marks)
            for kind, value in marks:
                if kind == "doc_check":
                    how, _, hidden = value.partition(":")
                    (p.sql if how.strip() == "sql" else p.sh)(line, hidden.strip() + "\n")
            if lang == "output":
                if p.last_output is None or normalized(p.last_output) != normalized(text):
                    p.fail(line, "the output differs from the page's", p.last_output or "(nothing ran)")
                continue
            if "untested" in kinds or lang not in RUN_LANGS:
                counts["untested"] += 1
                p.last_output = None
                continue
            if "file" in kinds:
                with open(os.path.join(p.work, kinds["file"]), "w") as f:
                    f.write(text)
                counts["run"] += 1
                continue
            if lang in ("sh", "bash"):
                p.sh(line, text)
            elif lang == "sql":
                p.sql(line, text)
            else:
                p.cpp(line, lang, text, None)
            counts["run"] += 1
    finally:
        p.close()


def main():
    pages = [os.path.join(ROOT, "README.md")]
    docs = os.path.join(ROOT, "docs")
    pages += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    if len(sys.argv) > 1:
        pages = [os.path.abspath(a) for a in sys.argv[1:]]
    counts = {"run": 0, "untested": 0}
    failed = []
    for index, path in enumerate(pages):
        before = dict(counts)
        try:
            check_page(path, index, counts)
            print("ok: %s (%d run, %d untested)" % (os.path.relpath(path, ROOT),
                                                      counts["run"] - before["run"],
                                                      counts["untested"] - before["untested"]))
        except page_failed as e:
            failed.append(str(e))
            print("FAILED: %s" % e, file=sys.stderr)
    total = counts["run"] + counts["untested"]
    print("doc blocks: %d run, %d untested" % (counts["run"], counts["untested"]))
    if failed:
        return 1
    if total and counts["run"] < 0.8 * total:
        print("fewer than 80%% of the doc blocks run (%d of %d)" % (counts["run"], total), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
