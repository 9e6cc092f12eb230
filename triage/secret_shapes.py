"""Where secrets hide in text a user pastes, and where they end: the shape scanner behind ``triage.redact``.

It finds the values of secrets it was not told (``Authorization``/``Bearer`` values, ``--api-key`` in a pasted command
line, quoted, ``=``-joined, continued with a backslash or holding escaped spaces, ``*_KEY``/``*_TOKEN`` values, URL
passwords, ``sk-…`` keys) in linear time, and splits a command line as a POSIX shell does (``shell_split``, also
linear). ``triage.redact`` is the one redaction point that uses it; nothing else should.

One room on purpose: the readers are methods of one scanner that share one forward-only cursor (the linear-time
proof is about them together).
"""
from __future__ import annotations

import re
from urllib.parse import unquote

REDACTED = "[REDACTED]"
_BARE = REDACTED.strip("[]")  # a pattern that starts inside "[REDACTED]" must leave it whole

# ---------------------------------------------------------------------------------------------------
# The shape scanner: linear time by construction. No regular expression reads a secret's surroundings:
# one literal-alternation search (no quantifier, so no backtracking) finds the trigger words, and
# hand-written readers take the value after each. Every reader moves forward only, and the search
# resumes after whatever a reader consumed, so each character is looked at a bounded number of times.
# ---------------------------------------------------------------------------------------------------

_TRIGGER = re.compile(r"(?i)key|token|auth|secret|pass|pwd|cred|bearer|://|hf_|sk-|-u|--user")
_IDENT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~+/=-")
_SPACE = " \t"
_SHELL_STOP = frozenset(" \t\r\n;|&<>()")
_WORD_STOP = frozenset(" \t\r\n")
_BARE_STOP = frozenset(" \t\r\n\"',;}])&#")
_QUERY_STOP = frozenset(" \t\r\n\"'&#<>")
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
# values that say "no secret" (``api_key="EMPTY"`` in a copyable snippet, ``api_key=None`` in a log)
_NOT_SECRET = frozenset({"", "none", "null", "true", "false", "empty", "nil", "redacted", "***", "******", "0", "1",
                         "yes", "no", "on", "off"})
_PROSE = frozenset({"on", "and", "or", "to", "is", "in", "with", "for", "the", "a", "an", "when", "if", "reads",
                    "of", "not", "was", "as", "at", "by", "from", "it", "that", "this", "are", "be", "only",
                    "given", "set", "must", "should", "will", "(", "were", "has", "have", "key", "keys",
                    "flag", "option", "value"})
_OPTIONS = {"apikey": True, "hftoken": False}  # --api-key takes several keys (nargs='+'), --hf-token one
_STRONG = frozenset({"hftoken", "password", "passwd", "secret", "clientsecret", "authtoken", "accesstoken",
                     "apitoken", "bearertoken", "huggingfacehubtoken", "huggingfacetoken", "sslpassword"})
_WEAK = frozenset({"token", "auth", "key", "pwd", "apikey"})  # only as a JSON/dict key or a URL query name
_SCHEMES = frozenset({"bearer", "basic", "token", "digest", "apikey", "api-key"})
_DB_PREFIXES = ("postgresql", "postgres", "mysql", "mariadb", "sqlite")
REGISTER_MIN = 6  # a value read from a shape becomes an exact secret for the run from this length
_MAX_ITEMS = 256  # values of one multi-value option / list read at most (the rest is left to the next hit)
_MAX_SKIP = 4096  # blanks/continuations skipped between a name and its value at most


def _norm(name: str) -> str:
    return name.lower().replace("-", "").replace("_", "")


# An environment variable's name judged by its parts (issue 43: HF_AUTH, MY_CREDENTIALS were kept): a part that is
# one of these words, or (the long words) ends in one (HFTOKEN, DBPASSWORD), names a secret ...
_PART_WORDS = frozenset({"KEY", "AUTH", "OAUTH", "PWD", "PASS"})
_PART_ENDINGS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "APIKEY", "CREDENTIAL", "CREDENTIALS")
# ... when the parts after it still name the secret itself (HF_TOKEN_VALUE, S3_ACCESS_KEY_ID, AUTH_HEADER), not a
# thing about it: KEY_CACHE_DTYPE (the attention's key cache), VLLM_MULTI_STREAM_GEMM_TOKEN_THRESHOLD (a count),
# DB_PASSWORD_FILE (a path) are no secrets
_STILL_THE_SECRET = frozenset({"VALUE", "ID", "B64", "BASE64", "RAW", "STR", "STRING", "HEADER", "DATA", "PLAIN",
                               "TEXT", "ENCODED", "PUBLIC", "PRIVATE"})


def _secret_part(part: str) -> bool:
    return part in _PART_WORDS or part.endswith(_PART_ENDINGS)


def secret_env_name(name: str) -> bool:
    """Whether an environment variable's ``name`` (any case: a manifest's env list) names a secret, judged by its
    ``_``-parts: a secret word (TOKEN, KEY, SECRET, AUTH, PASSWORD, CREDENTIAL …) followed only by parts that still
    name the value itself (``_VALUE``, ``_ID``, a version ``_V2``)."""
    parts = [p for p in name.upper().replace("-", "_").split("_") if p]
    last = max((i for i, p in enumerate(parts) if _secret_part(p)), default=-1)
    if last < 0 or (len(parts) == 1 and parts[0] in ("KEY", "AUTH", "PASS", "PWD")):  # a bare KEY: a placeholder
        return False
    return all(p in _STILL_THE_SECRET or p.isdigit() or (p[0] == "V" and p[1:].isdigit()) for p in parts[last + 1:])


def _secret_name(ident: str, quoted: bool, query: bool) -> bool:
    n = _norm(ident)
    if not n:
        return False
    if n.endswith("apikey") or n in _STRONG or n.endswith("password") or n.endswith("secret"):
        return True
    if ident[0].isalpha() and ident[0].isupper() and all(c in _UPPER for c in ident) and secret_env_name(ident):
        return True  # environment variables are upper case (kv_bytes_per_token=147456 is no secret)
    if n in _WEAK and (query or (quoted and n != "key")):  # a JSON "key" names things (a question's config key)
        return True
    return query and (n.endswith("token") or n.endswith("pwd"))


class _Scan:
    """One pass over ``text``: ``spans`` are the (start, end) ranges to replace, in order."""

    def __init__(self, text: str) -> None:
        self.t = text
        self.n = len(text)
        self.spans: list[tuple[int, int]] = []
        self.found: list[str] = []

    # -- readers: each returns the position after what it read -----------------------------------
    def skip(self, p: int, chars: str = _SPACE, limit: int = _MAX_SKIP) -> int:
        end = min(self.n, p + limit)
        while p < end and self.t[p] in chars:
            p += 1
        return p

    def skip_blanks_and_continuations(self, p: int) -> int:
        t, n = self.t, self.n
        start = p
        while p < n and p - start < _MAX_SKIP:
            c = t[p]
            if c in _SPACE:
                p += 1
            elif c == "\\" and t.startswith("\n", p + 1):
                p += 2
            elif c == "\\" and t.startswith("\r\n", p + 1):
                p += 3
            else:
                break
        return p

    def quoted(self, p: int) -> tuple[int, int, int]:
        """A quoted string at ``p`` (its quote char there): (inner start, inner end, end). Backslash escapes
        honoured in double quotes; an unclosed quote runs to the end of the line."""
        t, n, q = self.t, self.n, self.t[p]
        i = p + 1
        while i < n:
            c = t[i]
            if c == "\\" and q == '"' and i + 1 < n and t[i + 1] != "\n":
                i += 2
                continue
            if c == q:
                return p + 1, i, i + 1
            if c == "\n":
                return p + 1, i, i
            i += 1
        return p + 1, n, n

    def shell_word(self, p: int, stop: frozenset[str] = _SHELL_STOP) -> int:
        """One shell word from ``p``: quotes ('', "", $'') and backslash escapes are part of it."""
        t, n = self.t, self.n
        while p < n:
            c = t[p]
            if c in stop:
                break
            if c == "\\":
                p += 2
            elif c == "'" or c == '"':
                p = self.quoted(p)[2]
            elif c == "$" and t.startswith("'", p + 1):
                i = p + 2
                while i < n and t[i] != "'":
                    i += 2 if t[i] == "\\" else 1
                p = min(n, i + 1)
            else:
                p += 1
        return min(p, n)

    def bare(self, p: int, stop: frozenset[str] = _BARE_STOP) -> int:
        t, n = self.t, self.n
        while p < n and t[p] not in stop:
            p += 1
        return p

    def mark(self, a: int, b: int, value: str | None = None) -> None:
        if b <= a:
            return
        v = self.t[a:b] if value is None else value
        if v.strip().lower() in _NOT_SECRET or v.startswith(REDACTED) or _BARE in v and len(v) <= len(REDACTED):
            return
        self.spans.append((a, b))
        self.found.append(v)

    def value(self, p: int, *, with_scheme: bool = False) -> int:
        """The value after a name's separator: a quoted string, a list of them, or a bare word."""
        t, n = self.t, self.n
        p = self.skip(p)
        if t.startswith(REDACTED, p):
            return p + len(REDACTED)
        if p >= n:
            return p
        c = t[p]
        if c in "[(":
            return self.items(p + 1, many=True)
        if c in "\"'":
            a, b, end = self.quoted(p)
            if with_scheme:
                self.scheme_then_token(a, b)
            else:
                self.mark(a, b)
            return end
        if c == "{":
            return p + 1
        if with_scheme:
            stop = frozenset(" \t\r\n\"',}")
            q = self.bare(p, stop)
            if t[p:q].lower() in _SCHEMES:
                r = self.skip(q, limit=64)
                if r == q:
                    return q
                e = self.bare(r, stop)
                self.mark(r, e)
                return e
            self.mark(p, q)
            return q
        end = self.bare(p)
        self.mark(p, end)
        return end

    def scheme_then_token(self, a: int, b: int) -> None:
        t = self.t
        q = a
        while q < b and t[q] not in _SPACE:
            q += 1
        if t[a:q].lower() in _SCHEMES and q < b:
            r = q
            while r < b and t[r] in _SPACE:
                r += 1
            e = r
            while e < b and t[e] not in _SPACE:
                e += 1
            self.mark(r, e)
        else:
            self.mark(a, q)

    def items(self, p: int, *, many: bool, stop_at_option: bool = True) -> int:
        """Items of a list (``['k1', 'k2']``, ``["--api-key", "K"]`` after the option): quoted or bare,
        comma-separated; ends at the closing bracket, at an option (``-x``) or at anything else."""
        t, n = self.t, self.n
        for _ in range(_MAX_ITEMS):
            p = self.skip(p, " \t\r\n,")
            if p >= n or t[p] in "])}":
                return min(n, p + 1)
            if t.startswith(REDACTED, p):
                p += len(REDACTED)
                continue
            if t[p] in "\"'":
                a, b, end = self.quoted(p)
            else:
                a = p
                b = end = self.bare(p, frozenset(" \t\r\n,])}"))
                if b == a:
                    return p + 1
            if stop_at_option and t.startswith("-", a):
                return p
            self.mark(a, b)
            p = end
            if not many:
                return p
        return p

    def option(self, p: int, many: bool) -> int:
        """The value(s) of ``--api-key``/``--hf-token`` ending at ``p``, in every form we have met."""
        t, n = self.t, self.n
        if p < n and t[p] in "\"'":  # the option was a quoted list item: ["--api-key","K"] / ['--api-key', 'K']
            return self.items(p + 1, many=many)
        if p < n and t[p] == ",":  # [--api-key, K]
            return self.items(p + 1, many=many)
        if p < n and t[p] == "=":
            end = self.shell_word(p + 1)
            self.mark(p + 1, end, _shell_unquote(t[p + 1:end]))
            return end
        q = self.skip_blanks_and_continuations(p)
        if q < n and t[q] in "\r\n":  # a YAML block list: "- --api-key" then "- K" on the next lines
            for _ in range(_MAX_ITEMS):
                r = self.skip(q, "\r\n")
                r = self.skip(r)
                if not (t.startswith("- ", r) or t.startswith("-\t", r)):
                    return self.lone_words(q, many)
                r = self.skip(r + 1)
                if t.startswith("-", r) or r >= n:
                    return q
                if t[r] in "\"'":
                    a, b, end = self.quoted(r)
                else:
                    a, b = r, self.bare(r, frozenset("\r\n#"))
                    while b > a and t[b - 1] in _SPACE:
                        b -= 1
                    end = b
                self.mark(a, b)
                q = end
                if not many:
                    return q
                q = self.skip(q)
            return q
        if q == p:
            return p
        for _ in range(_MAX_ITEMS):
            if q >= n or t[q] in _SHELL_STOP or t[q] == "-":
                return q
            end = self.shell_word(q)
            if end == q:
                return q + 1
            if t[q:end].lower() in _PROSE:  # "--api-key on the command line" is a sentence, not a key
                return q
            self.mark(q, end, _shell_unquote(t[q:end]))
            if not many:
                return end
            q = self.skip_blanks_and_continuations(end)
        return q

    def lone_words(self, q: int, many: bool) -> int:
        """``kubectl describe``'s Args (issue 43): each argument on a line of its own, no list dash; the value(s)
        after ``--api-key`` are the next lines that hold one word which is no option (a line of words is prose)."""
        t, n = self.t, self.n
        for _ in range(_MAX_ITEMS):
            r = q + 2 if t.startswith("\r\n", q) else q + 1 if q < n and t[q] in "\r\n" else q
            if r == q:
                return q
            r = self.skip(r)
            end = self.bare(r, frozenset(" \t\r\n"))
            rest = self.skip(end)
            if end == r or t.startswith("-", r) or (rest < n and t[rest] not in "\r\n") or \
                    t[r:end].lower() in _PROSE or t[r:end].endswith(":"):
                return q
            self.mark(r, end)
            q = rest
            if not many:
                return q
        return q

    def url(self, p: int) -> int:
        """``://`` at ``p``: user:password@ / token@ (a database user name alone is kept)."""
        t, n = self.t, self.n
        a = p + 3
        e = a
        while e < n and e - a < 2048 and t[e] not in " \t\r\n/'\"<>?#":
            e += 1
        at = t.rfind("@", a, e)
        if at <= a:
            return e if at < 0 else a
        colon = t.find(":", a, at)
        if colon >= 0:
            self.mark(colon + 1, at)
        else:
            scheme = t[max(0, p - 20):p].lower()
            if not scheme.split("+")[0].endswith(_DB_PREFIXES) and "+" not in scheme[-12:]:
                self.mark(a, at)
        return e

    def curl_user(self, p: int, attached: bool) -> int:
        """``curl -u user:pw`` / ``--user user:pw`` / ``-uuser:pw``: the password after the first colon."""
        t, n = self.t, self.n
        if attached:
            end = self.shell_word(p)
            self.mark(p, end)
            return end
        q = p + 1 if p < n and t[p] == "=" else self.skip(p)
        if q == p or q >= n:
            return q
        end = self.shell_word(q)
        word = t[q:end]
        c = word.find(":")
        if c < 0:
            return end
        close = 1 if word[-1:] in "\"'" and len(word) > c + 2 else 0
        self.mark(q + c + 1, end - close)
        return end

    def run(self) -> None:
        t, n = self.t, self.n
        pos = 0
        while pos < n:
            m = _TRIGGER.search(t, pos)
            if m is None:
                return
            h = m.start()
            word = m.group().lower()
            if word == "://":
                pos = self.url(h)
                continue
            # the whole identifier around the hit (never back before pos: each character read once)
            s = h
            while s > pos and t[s - 1] in _IDENT:
                s -= 1
            e = m.end()
            while e < n and t[e] in _IDENT:
                e += 1
            ident = t[s:e]
            before = t[s - 1] if s > 0 else ""
            pos = max(e, pos + 1)
            if ident.startswith("--") and (before == "" or before in " \t\r\n\"'[,=(\\"):
                many = _OPTIONS.get(_norm(ident))
                if many is not None:
                    pos = max(pos, self.option(e, many))
                    continue
                if ident == "--user":
                    pos = max(pos, self.curl_user(e, False))
                    continue
            if ident.startswith("-u") and not ident.startswith("--") and (before == "" or before in " \t'\""):
                if ident == "-u":
                    pos = max(pos, self.curl_user(e, False))
                elif t.startswith(":", e) and ident[2:3].isalnum():
                    pos = max(pos, self.curl_user(e + 1, True))
                continue
            low = ident.lower()
            if low.startswith("hf_") and m.group() == "hf_" and s == h and len(ident) >= 11 \
                    and before not in _ALNUM and all(c in _ALNUM for c in ident[3:11]):
                self.mark(s, s + 3 + _run(t, s + 3, e, _ALNUM))
                continue
            if low.startswith("sk-") and m.group() == "sk-" and s == h and len(ident) >= 11 and before not in _ALNUM:
                self.mark(s, e)
                continue
            if low == "bearer":
                q = self.skip(e, limit=64)
                if q > e:
                    r = q
                    while r < n and t[r] in _TOKEN_CHARS:
                        r += 1
                    if r - q >= 4:
                        self.mark(q, r)
                        pos = max(pos, r)
                continue
            quoted = before in "\"'" and t.startswith(before, e) and before != ""
            query = before in "?&" and before != ""
            after = e + 1 if quoted else e
            q = self.skip(after, limit=64)
            sep = t[q] if q < n else ""
            if _norm(ident) in ("authorization", "proxyauthorization") and sep in (":", "="):
                pos = max(pos, self.value(q + 1, with_scheme=True))
                continue
            named = _secret_name(ident, quoted, query)
            # an environment list names its variables in any case ("- name: hf_auth"): judged by the name's parts
            env_only = not named and secret_env_name(ident)
            if not (named or env_only):
                continue
            if named and query and sep == "=":
                end = self.bare(q + 1, _QUERY_STOP)
                self.mark(q + 1, end, unquote(t[q + 1:end]))
                pos = max(pos, end)
            elif named and sep in (":", "="):
                pos = max(pos, self.value(q + 1))
            elif quoted or sep in ("\r", "\n", "") or before in " \t":
                # an environment list: "- name: VLLM_API_KEY" then "value: K" ({"name": .., "value": ..})
                head = t[max(pos - len(ident) - 40, s - 40, 0):s].rstrip(" \t\"'").rstrip(":=").rstrip(" \t\"'")
                if head.lower().endswith("name"):
                    w = t.find("value", e, min(n, e + 300))
                    if w >= 0:
                        r = self.skip(w + 5, " \t\"'", 64)
                        if r < n and t[r] in ":=":
                            pos = max(pos, self.value(r + 1))


def _run(t: str, a: int, b: int, chars: frozenset[str]) -> int:
    i = a
    while i < b and t[i] in chars:
        i += 1
    return i - a


def _shell_unquote(word: str) -> str:
    """The value a shell gives a word (quotes removed, escapes resolved), linearly."""
    out: list[str] = []
    i, n = 0, len(word)
    while i < n:
        c = word[i]
        if c == "\\" and i + 1 < n:
            out.append(word[i + 1])
            i += 2
        elif c == "'":
            j = word.find("'", i + 1)
            j = n if j < 0 else j
            out.append(word[i + 1:j])
            i = j + 1
        elif c == "$" and word.startswith("'", i + 1):
            j = i + 2
            while j < n and word[j] != "'":
                j += 2 if word[j] == "\\" else 1
            inner = word[i + 2:min(j, n)]
            try:
                out.append(inner.encode("latin-1", "backslashreplace").decode("unicode_escape"))
            except (UnicodeDecodeError, ValueError):
                out.append(inner)
            i = j + 1
        elif c == '"':
            j = i + 1
            while j < n and word[j] != '"':
                if word[j] == "\\" and j + 1 < n and word[j + 1] in '"\\$`':
                    out.append(word[j + 1])
                    j += 2
                else:
                    out.append(word[j])
                    j += 1
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def scan_secrets(text: str) -> list[str]:
    """The secret values the shapes find in ``text`` (each as it would be used), in order."""
    sc = _Scan(text)
    sc.run()
    return [_clean(v) for v in sc.found]


def _clean(v: str) -> str:
    return v.strip()


def find_shapes(text: str) -> list[tuple[tuple[int, int], str]]:
    """Every secret the shapes find in ``text``: (its span, its value as found), in order."""
    sc = _Scan(text)
    sc.run()
    return list(zip(sc.spans, sc.found, strict=True))


def shell_split(text: str) -> list[str]:
    """Split like a POSIX shell (quotes, ``$''``, backslash escapes; no comments), in linear time:
    ``shlex.split`` is quadratic on a long quoted token (700 KB: 15 s). An unclosed quote ends at the line."""
    sc = _Scan(text)
    t, n = text, len(text)
    words: list[str] = []
    p = 0
    while p < n:
        while p < n and t[p] in " \t\r\n":
            p += 1
        if p >= n:
            break
        end = sc.shell_word(p, _WORD_STOP)
        words.append(_shell_unquote(t[p:end]))
        p = max(end, p + 1)
    return words
