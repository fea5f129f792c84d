import { describe, expect, it } from 'vitest';
import { ENV_NAME_PATTERN, isDangerousEnvName } from '../../src/core/security/dangerous-environment.js';

describe('isDangerousEnvName (CONTRACT §4)', () => {
  it.each([
    'LD_PRELOAD', 'LD_LIBRARY_PATH', 'LD_AUDIT', 'DYLD_INSERT_LIBRARIES', 'BASH_ENV', 'ENV', 'PROMPT_COMMAND', 'SHELLOPTS', 'BASHOPTS',
    'PS4', 'IFS', 'PATH', 'NODE_OPTIONS', 'GIT_SSH_COMMAND', 'GIT_CONFIG', 'GIT_CONFIG_COUNT', 'GIT_CONFIG_KEY_0', 'GIT_CONFIG_GLOBAL',
    'GIT_EXEC_PATH', 'PYTHONSTARTUP', 'PERL5OPT', 'RUBYOPT',
  ])('%s is dangerous', (name) => {
    expect(isDangerousEnvName(name)).toBe(true);
  });

  it.each(['HOME', 'NODE_ENV', 'LANG', 'MYPATH', 'PATHS', 'ld_preload', 'LDPRELOAD', 'GIT_AUTHOR_NAME', 'ENVIRONMENT', 'PS1', 'GIT_CONFIGX'])(
    '%s is not on the list',
    (name) => {
      expect(isDangerousEnvName(name)).toBe(false);
    },
  );
});

describe('ENV_NAME_PATTERN', () => {
  it.each(['A', '_x', 'NODE_ENV', 'a1'])('accepts %s', (name) => {
    expect(ENV_NAME_PATTERN.test(name)).toBe(true);
  });

  it.each(['', '1A', 'A-B', 'A B', 'A=B', 'a[1]', 'é'])('rejects %j', (name) => {
    expect(ENV_NAME_PATTERN.test(name)).toBe(false);
  });
});
