import { defineConfig } from 'prisma/config';
import { PrismaBetterSQLite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaPg } from '@prisma/adapter-pg';

// The JS engine with driver adapters: the native schema engine cannot be downloaded here.
// DATABASE_URL picks the provider's schema and adapter, as it does for the service itself.
const url = process.env.DATABASE_URL ?? 'file:./data/assistant.db';
const isPostgres = /^postgres(ql)?:\/\//.test(url);

export default defineConfig({
  engine: 'js',
  experimental: { adapter: true },
  schema: isPostgres ? 'prisma/postgresql/schema.prisma' : 'prisma/sqlite/schema.prisma',
  adapter: () =>
    Promise.resolve(isPostgres ? new PrismaPg({ connectionString: url }) : new PrismaBetterSQLite3({ url })),
});
