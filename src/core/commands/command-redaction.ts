// A command line as the audit log and the logs keep it (CONTRACT §4: no secrets there). The
// pending-command store keeps the real line, since that is what runs after confirmation.

const patterns: [RegExp, string][] = [
  // Authorization headers and bearer tokens: `-H "Authorization: Bearer abc"`.
  [/(authorization:\s*(?:bearer|basic|token)?\s*)[^\s'"]+/gi, '$1[redacted]'],
  [/(\bbearer\s+)[^\s'"]+/gi, '$1[redacted]'],
  // key=value and --key=value forms of secret-looking names, in options, URLs and assignments.
  [/((?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token|secret|password|passwd)\s*[=:]\s*)[^\s&'"]+/gi, '$1[redacted]'],
  // --password value, --token value.
  [/(--(?:password|passwd|token|api-?key|secret)\s+)[^\s'"]+/gi, '$1[redacted]'],
  // Credentials inside URLs: https://user:secret@host.
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:)[^@\s/]+@/gi, '$1[redacted]@'],
];

export function redactCommand(command: string): string {
  let text = command;
  for (const [pattern, replacement] of patterns) text = text.replace(pattern, replacement);
  return text;
}
