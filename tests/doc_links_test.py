#!/usr/bin/env python3
"""Checks the relative links of the repository's markdown: every [text](path) and
[text](path#anchor) in README.md, docs/, bench/, tests/, backends/ and tools/ must name a file or
directory that exists (relative to the linking file), and an anchor into a .md file (or into the
linking file itself, [text](#anchor)) must match one of its headings under GitHub's slug rules
(or an <a id=...> / <a name=...> of it). http(s) and mailto links, fenced code blocks and inline
code are skipped. Each broken link is printed as FILE:LINE: broken link TARGET (why); the exit
status is 1 if there is any.

Run as `bazel test //tests:doc_links_test` (the files come from the runfiles: the markdown and
every file it links to must be in the test's data, see tests/BUILD) or directly from a checkout
as `python3 tests/doc_links_test.py` (reads the working tree)."""
import os
import re
import sys
import urllib.parse

# Where the markdown lives, relative to the repository root (README.md, then whole trees).
TOP_FILES = ["README.md"]
TREES = ["docs", "bench", "tests", "backends", "tools"]

# Links to things that are legitimately not in the repository; each entry says why. Keys are
# (linking file, target as written). Keep this tiny.
ALLOWED = {}

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:[^>]*\s)?(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.I)
INLINE_LINK = re.compile(
    r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*(<[^>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")


def repo_root():
    """The checkout (direct run) or the main repository's runfiles directory (bazel test): both
    are the parent of this file's directory, as long as symlinks are not resolved."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def markdown_files(root):
    """Every .md file the check reads, as paths relative to root, sorted."""
    found = [f for f in TOP_FILES if os.path.isfile(os.path.join(root, f))]
    for tree in TREES:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, tree)):
            dirnames.sort()
            for name in filenames:
                if name.endswith(".md"):
                    found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(found)


def blank_code_spans(text):
    """text with every inline code span (backtick runs of equal length) replaced by spaces,
    newlines kept, so that offsets and line numbers stay right."""
    out = []
    i = 0
    n = len(text)
    while i < n:
        if text[i] != "`":
            out.append(text[i])
            i += 1
            continue
        j = i
        while j < n and text[j] == "`":
            j += 1
        ticks = text[i:j]
        close = re.compile(r"(?<!`)" + ticks + r"(?!`)").search(text, j)
        if close is None:  # an unmatched run is literal text
            out.append(ticks)
            i = j
            continue
        span = text[i:close.end()]
        out.append("".join("\n" if c == "\n" else " " for c in span))
        i = close.end()
    return "".join(out)


def fence_step(fence, line):
    """The fence open after line, given the fence open before it (None outside code), and
    whether line is inside or delimits a fenced code block. A closing fence uses the opening's
    character, at least as many times, and nothing after it."""
    m = FENCE.match(line)
    if fence is not None:
        closes = m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
            and line[m.end():].strip() == ""
        return (None if closes else fence), True
    if m and not (m.group(1)[0] == "`" and "`" in line[m.end():]):
        return m.group(1), True
    return None, False


def blocks_outside_fences(lines):
    """Yields (first line number, text) for each run of lines outside fenced code blocks;
    a run ends at a blank line or a fence, so inline code spans never cross runs."""
    fence = None
    start, buf = None, []
    for number, line in enumerate(lines, 1):
        fence, in_code = fence_step(fence, line)
        if in_code or line.strip() == "":
            if buf:
                yield start, "\n".join(buf)
            start, buf = None, []
            continue
        if start is None:
            start = number
        buf.append(line)
    if buf:
        yield start, "\n".join(buf)


def heading_texts(lines):
    """The text of every ATX heading outside fenced code blocks, in order."""
    texts = []
    fence = None
    for line in lines:
        fence, in_code = fence_step(fence, line)
        h = None if in_code else ATX.match(line)
        if h:
            texts.append(h.group(2) or "")
    return texts


def rendered_text(heading):
    """What GitHub renders of a heading's markdown: code spans keep their content, links and
    images keep their text, emphasis markers and HTML tags go."""
    text = re.sub(r"(`+)(.+?)\1", lambda m: "\0" + m.group(2).strip().replace("_", "\1") + "\0",
                  heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"(\*+|(?<![^\W_])_+|_+(?![^\W_]))", "", text)
    return text.replace("\0", "").replace("\1", "_")


def slug(heading):
    """GitHub's anchor for a heading: lowercase, punctuation other than - and _ dropped, each
    space becomes -."""
    text = rendered_text(heading).strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors_of(text):
    """Every anchor a markdown file defines: heading slugs (a repeated slug gets -1, -2, ...) and
    the ids and names of <a> tags."""
    anchors = set()
    seen = {}
    for heading in heading_texts(text.splitlines()):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        anchors.add(base if count == 0 else "%s-%d" % (base, count))
    anchors.update(HTML_ANCHOR.findall(text))
    return anchors


def links_in(text):
    """(line number, target) for every inline link and reference definition outside code."""
    found = []
    for first, block in blocks_outside_fences(text.splitlines()):
        plain = blank_code_spans(block)
        for m in INLINE_LINK.finditer(plain):
            target = m.group(2)
            if target.startswith("<") and target.endswith(">"):
                target = target[1:-1]
            line = first + plain.count("\n", 0, m.start(2))
            found.append((line, target))
        for offset, line_text in enumerate(plain.split("\n")):
            d = REF_DEF.match(line_text)
            if d:
                found.append((first + offset, d.group(1).strip("<>")))
    return found


class Checker:
    """Checks links file by file, caching the anchors of each target it reads."""

    def __init__(self, root):
        self.root = root
        self.anchor_cache = {}

    def anchors(self, path):
        if path not in self.anchor_cache:
            with open(path, encoding="utf-8") as f:
                self.anchor_cache[path] = anchors_of(f.read())
        return self.anchor_cache[path]

    def problem(self, md, target):
        """Why target (as written in md, a path relative to root) is broken, or None."""
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):  # http:, https:, mailto:, ...
            return None
        path_part, _, anchor = target.partition("#")
        path_part = urllib.parse.unquote(path_part)
        anchor = urllib.parse.unquote(anchor)
        if path_part.startswith("/"):
            return "absolute path; use a path relative to the linking file"
        source = os.path.join(self.root, md)
        resolved = os.path.normpath(os.path.join(os.path.dirname(source), path_part)) \
            if path_part else source
        rel = os.path.relpath(resolved, self.root)
        if rel.startswith(".."):
            return "points outside the repository"
        if not os.path.exists(resolved):
            return "no such file or directory: %s" % rel
        if path_part.endswith("/") and not os.path.isdir(resolved):
            return "%s is not a directory" % rel
        if anchor and resolved.endswith(".md"):
            if os.path.isdir(resolved):
                return "%s is a directory, it has no anchors" % rel
            if anchor not in self.anchors(resolved):
                return "no heading of %s has the anchor #%s" % (rel, anchor)
        return None

    def check(self, md):
        """Broken links of one markdown file as printable lines."""
        with open(os.path.join(self.root, md), encoding="utf-8") as f:
            text = f.read()
        broken = []
        for line, target in links_in(text):
            why = self.problem(md, target)
            if why and ALLOWED.get((md, target)) is None:
                broken.append("%s:%d: broken link %s (%s)" % (md, line, target, why))
        return broken


def main():
    root = repo_root()
    files = markdown_files(root)
    if "README.md" not in files or not any(f.startswith("docs/") for f in files):
        print("doc_links_test: README.md or docs/*.md not found under %s" % root)
        return 1
    checker = Checker(root)
    broken = []
    for md in files:
        broken.extend(checker.check(md))
    for line in broken:
        print(line)
    stale = [key for key in ALLOWED if not os.path.exists(os.path.join(root, key[0]))]
    for md, target in stale:
        print("%s: allow-list entry for %s names a file that is gone" % (md, target))
    print("doc_links_test: %d markdown files, %d broken links" % (len(files), len(broken)))
    return 1 if broken or stale else 0


if __name__ == "__main__":
    sys.exit(main())
