// A command line as the audit log and the logs keep it (CONTRACT §4: no secrets there). The
// pending-command store keeps the real line, since that is what runs after confirmation.

// A secret-looking name: one with secret, token, password or credential in it (AUTH_TOKEN,
// aws_secret_access_key), or with pat, pass, auth or key as a part of its own (GITHUB_PAT,
// DB_PASS, SSH_KEY), but not PATH or monkey. Tested on a name already cut out (at most 128
// characters), never searched for in the line: an unanchored search for it backtracks
// cubically on a long run of name characters, and a command line is up to 16384 of them.
const secretName =
  /^(?:[a-z0-9_-]*(?:api[_-]?key|apikey|secret|token|passw(?:or)?d|credentials?)[a-z0-9_-]*|(?:[a-z0-9]+[_-])*(?:pat|pass|auth|key)(?:[_-][a-z0-9]+)*)$/i;

/**
 * Redacts the value after each secret-looking name that `namePattern` (global, capturing the name
 * and ending where the value starts) finds; a name that is not secret-looking consumes only
 * itself, so a secret later in the same value (`https://x/?apiKey=…`) is still found.
 */
function redactNamedValues(text: string, namePattern: RegExp, valueEnd: RegExp, closing = ''): string {
  let out = '';
  let last = 0;
  namePattern.lastIndex = 0;
  for (let match = namePattern.exec(text); match !== null; match = namePattern.exec(text)) {
    const name = match[1] ?? '';
    if (!secretName.test(name)) continue;
    const valueStart = match.index + match[0].length;
    valueEnd.lastIndex = valueStart;
    const end = valueEnd.exec(text)?.index ?? text.length;
    out += `${text.slice(last, valueStart)}[redacted]${closing}`;
    last = end + closing.length;
    namePattern.lastIndex = Math.max(last, namePattern.lastIndex);
  }
  return out + text.slice(last);
}

// Every pattern is linear in the line's length: repetitions are bounded or anchored on a
// character they cannot repeat (tests/unit/command-redaction.test.ts times a hostile line).
const patterns: [RegExp, string][] = [
  // Authorization headers and bearer tokens: `-H "Authorization: Bearer abc"`.
  [/(authorization:\s*(?:bearer|basic|token)?\s*)[^\s'"]+/gi, '$1[redacted]'],
  [/(\bbearer\s+)[^\s'"]+/gi, '$1[redacted]'],
  // --password value, --token value.
  [/(--(?:password|passwd|token|api-?key|secret)\s+)[^\s'"]+/gi, '$1[redacted]'],
  // curl -u user:password, and mysql-style -p<password> glued to its option.
  [/(\s-u\s*['"]?[^\s:'"]+:)[^\s'"]+/g, '$1[redacted]'],
  // A password glued to `-p` (mysql, mysqldump, sshpass, many database tools; any program may
  // take one so): four characters or more, so `mkdir -pv` and `ls -p` keep their meaning.
  [/(\s-p)[^\s'"]{4,}/g, '$1[redacted]'],
  // Credentials inside URLs: https://user:secret@host (a scheme is at most 32 characters).
  [/(\b[a-z][a-z0-9+.-]{0,31}:\/\/[^/\s:@]+:)[^@\s/]+@/gi, '$1[redacted]@'],
];

export function redactCommand(command: string): string {
  let text = command;
  for (const [pattern, replacement] of patterns) text = text.replace(pattern, replacement);
  // JSON members with secret-looking names: `{"apiKey": "sk-…"}`.
  text = redactNamedValues(text, /"([a-z0-9_-]{1,128})"\s*:\s*"/gi, /"/g, '"');
  // NAME=value and --name=value with secret-looking names, in assignments, options and URLs.
  text = redactNamedValues(text, /\b([a-z0-9_-]{1,128})\s*[=:]\s*/gi, /[\s&'"]|$/g);
  return text;
}
