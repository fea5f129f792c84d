import { readFileSync } from 'node:fs';

// package.json sits two levels up from both src/core and dist/core.
const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export const serviceVersion: string = packageJson.version;
