import { execFile } from 'node:child_process';

// Whether a terminal shows what is typed (CONTRACT §11: typed lines are audited in full only
// then). Read from the terminal's own settings with stty: ECHO on, or canonical input off (a
// program such as readline or an editor that reads keys one by one and draws them itself). A
// password prompt (getpass, `read -s`, sudo, ssh) turns ECHO off and keeps canonical input.

const ECHO = 0o10;
const ICANON = 0o2;

/** How long stty may take before the answer counts as unknown. */
const STTY_TIMEOUT_MS = 2000;

/** True while the terminal echoes, false while it hides what is typed, null when it cannot be read. */
export function terminalEchoes(device: string): Promise<boolean | null> {
  return new Promise((resolve) => {
    execFile('stty', ['-F', device, '-g'], { timeout: STTY_TIMEOUT_MS }, (error, stdout) => {
      if (error) {
        resolve(null);
        return;
      }
      resolve(echoesFromSettings(stdout));
    });
  });
}

/** Reads `stty -g` output (iflag:oflag:cflag:lflag:…, in hexadecimal). */
export function echoesFromSettings(settings: string): boolean | null {
  const lflag = settings.trim().split(':')[3];
  if (lflag === undefined || !/^[0-9a-f]+$/i.test(lflag)) return null;
  const flags = Number.parseInt(lflag, 16);
  return (flags & ECHO) !== 0 || (flags & ICANON) === 0;
}
