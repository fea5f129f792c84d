import { describe, expect, it } from 'vitest';
import { redactCommand } from '../../src/core/commands/command-redaction.js';

// What the audit log keeps of a command line: its shape, never a secret (CONTRACT §4).

describe('redactCommand', () => {
  it.each([
    ['curl -H "Authorization: Bearer sk-123" https://x', 'curl -H "Authorization: Bearer [redacted]" https://x'],
    ['curl "https://api.x/v1?apiKey=sk-123&q=1"', 'curl "https://api.x/v1?apiKey=[redacted]&q=1"'],
    ['curl -d \'{"apiKey": "sk-123", "q": 1}\' https://x', 'curl -d \'{"apiKey": "[redacted]", "q": 1}\' https://x'],
    ['AWS_SECRET_ACCESS_KEY=abc aws s3 ls', 'AWS_SECRET_ACCESS_KEY=[redacted] aws s3 ls'],
    ['GITHUB_PAT=ghp_x gh repo list', 'GITHUB_PAT=[redacted] gh repo list'],
    ['export DB_PASS=hunter2', 'export DB_PASS=[redacted]'],
    ['tool --token abc --password=def', 'tool --token [redacted] --password=[redacted]'],
    ['curl -u alice:hunter2 https://x', 'curl -u alice:[redacted] https://x'],
    ['mysql -u root -phunter2 db', 'mysql -u root -p[redacted] db'],
    ['true -pS3cret', 'true -p[redacted]'],
    ['sshpass -pS3cret ssh host', 'sshpass -p[redacted] ssh host'],
    ['psql "host=x" && pg_dump -pSuperSecret', 'psql "host=x" && pg_dump -p[redacted]'],
    ['git clone https://alice:hunter2@example.com/r.git', 'git clone https://alice:[redacted]@example.com/r.git'],
  ])('%s', (command, redacted) => {
    expect(redactCommand(command)).toBe(redacted);
  });

  it.each(['PATH=/usr/bin:/bin make', 'ls --sort=size', 'git log --author=alice', 'echo monkey=1', 'cp -r src dst', 'mkdir -pv a/b', 'ls -p'])(
    'leaves %s alone',
    (command) => {
      expect(redactCommand(command)).toBe(command);
    },
  );

  // A line of MAX_COMMAND_LENGTH made of name characters once held the event loop for 86 s
  // (a secret-name pattern backtracked cubically). Each hostile shape must take a blink, not
  // seconds: the bound is a thousand times what the linear patterns need here.
  it.each(['token-', 'x-', 'a', 'http-', 'pass_', 'ab:', '-p'])('redacts a maximum-length line of %j without backtracking', (unit) => {
    const line = `echo ${unit.repeat(Math.floor(16379 / unit.length))}`;
    const started = performance.now();
    redactCommand(line);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
