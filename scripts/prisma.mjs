// Runs a Prisma CLI command once per database provider, with DATABASE_URL set to a URL of that
// provider's kind: Prisma 6's JS engine otherwise falls back to downloading a native engine.
//   node scripts/prisma.mjs generate
import { spawnSync } from 'node:child_process';

const placeholderUrls = {
  sqlite: 'file::memory:',
  postgresql: 'postgresql://prisma-cli@127.0.0.1:5432/unused',
};
const args = process.argv.slice(2);

for (const [provider, url] of Object.entries(placeholderUrls)) {
  const result = spawnSync(
    'npx',
    ['prisma', ...args, '--schema', `prisma/${provider}/schema.prisma`],
    { stdio: 'inherit', env: { ...process.env, DATABASE_URL: url, PRISMA_HIDE_UPDATE_MESSAGE: '1' } },
  );
  if (result.status !== 0) process.exit(result.status ?? 1);
}
