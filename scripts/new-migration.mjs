// Writes the SQL migration from the last migrated schema to the current one, for each provider:
//   node scripts/new-migration.mjs add_things
// prisma/<provider>/migrated.prisma records the schema the committed migrations produce, so the
// next diff starts from it. `migrate diff` needs no database, unlike `migrate dev`.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';

// The JS engine opens a connection even to diff two datamodels, so PostgreSQL must be reachable:
// MIGRATION_DIFF_POSTGRES_URL names one (nothing is written to it).
const placeholderUrls = {
  sqlite: 'file::memory:',
  postgresql: process.env.MIGRATION_DIFF_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
};
const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error('usage: node scripts/new-migration.mjs <name in snake_case>');
  process.exit(2);
}
const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);

for (const [provider, url] of Object.entries(placeholderUrls)) {
  const dir = `prisma/${provider}`;
  const from = existsSync(`${dir}/migrated.prisma`)
    ? ['--from-schema-datamodel', `${dir}/migrated.prisma`]
    : ['--from-empty'];
  const result = spawnSync(
    'npx',
    ['prisma', 'migrate', 'diff', ...from, '--to-schema-datamodel', `${dir}/schema.prisma`, '--script'],
    { encoding: 'utf8', env: { ...process.env, DATABASE_URL: url } },
  );
  if (result.status !== 0) {
    console.error(result.stderr);
    process.exit(result.status ?? 1);
  }
  const sql = result.stdout;
  if (!/^\s*(CREATE|ALTER|DROP|INSERT|UPDATE|PRAGMA)/im.test(sql)) {
    console.log(`${provider}: no change`);
    continue;
  }
  const target = `${dir}/migrations/${stamp}_${name}`;
  mkdirSync(target, { recursive: true });
  writeFileSync(`${target}/migration.sql`, sql);
  copyFileSync(`${dir}/schema.prisma`, `${dir}/migrated.prisma`);
  console.log(`${provider}: wrote ${target}/migration.sql`);
}
