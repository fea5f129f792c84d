// A command line as the audit log and the logs keep it (CONTRACT §4: no secrets there). The
// pending-command store keeps the real line, since that is what runs after confirmation.

// A secret-looking name: one with secret, token, password or credential in it (AUTH_TOKEN,
// aws_secret_access_key), or with pat, pass, auth or key as a part of its own (GITHUB_PAT,
// DB_PASS, SSH_KEY), but not PATH or monkey.
const secretName =
  '(?:[a-z0-9_-]*(?:api[_-]?key|apikey|secret|token|passw(?:or)?d|credentials?)[a-z0-9_-]*|(?:[a-z0-9]+[_-])*(?:pat|pass|auth|key)(?:[_-][a-z0-9]+)*)';

const patterns: [RegExp, string][] = [
  // Authorization headers and bearer tokens: `-H "Authorization: Bearer abc"`.
  [/(authorization:\s*(?:bearer|basic|token)?\s*)[^\s'"]+/gi, '$1[redacted]'],
  [/(\bbearer\s+)[^\s'"]+/gi, '$1[redacted]'],
  // JSON members with secret-looking names: `{"apiKey": "sk-…"}`.
  [new RegExp(`("${secretName}"\\s*:\\s*")[^"]*"`, 'gi'), '$1[redacted]"'],
  // NAME=value and --name=value with secret-looking names, in assignments, options and URLs.
  [new RegExp(`(\\b${secretName}\\s*[=:]\\s*)[^\\s&'"]+`, 'gi'), '$1[redacted]'],
  // --password value, --token value.
  [/(--(?:password|passwd|token|api-?key|secret)\s+)[^\s'"]+/gi, '$1[redacted]'],
  // curl -u user:password, and mysql-style -p<password> glued to its option.
  [/(\s-u\s*['"]?[^\s:'"]+:)[^\s'"]+/g, '$1[redacted]'],
  // A password glued to `-p` (mysql, mysqldump, sshpass, many database tools; any program may
  // take one so): four characters or more, so `mkdir -pv` and `ls -p` keep their meaning.
  [/(\s-p)[^\s'"]{4,}/g, '$1[redacted]'],
  // Credentials inside URLs: https://user:secret@host.
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:)[^@\s/]+@/gi, '$1[redacted]@'],
];

export function redactCommand(command: string): string {
  let text = command;
  for (const [pattern, replacement] of patterns) text = text.replace(pattern, replacement);
  return text;
}
