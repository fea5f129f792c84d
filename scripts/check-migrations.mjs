// Fails when a provider's schema has changes that no committed migration carries, i.e. when
// prisma/<provider>/schema.prisma differs from migrated.prisma. Fix: npm run db:migration -- <name>.
import { existsSync, readFileSync, readdirSync } from 'node:fs';

let problems = 0;
for (const provider of ['sqlite', 'postgresql']) {
  const dir = `prisma/${provider}`;
  const schema = readFileSync(`${dir}/schema.prisma`, 'utf8');
  const migrated = existsSync(`${dir}/migrated.prisma`) ? readFileSync(`${dir}/migrated.prisma`, 'utf8') : '';
  if (schema !== migrated) {
    console.error(`${dir}/schema.prisma has changes without a migration: run npm run db:migration -- <name>`);
    problems++;
  }
  for (const entry of readdirSync(`${dir}/migrations`, { withFileTypes: true })) {
    if (entry.isDirectory() && !existsSync(`${dir}/migrations/${entry.name}/migration.sql`)) {
      console.error(`${dir}/migrations/${entry.name} has no migration.sql`);
      problems++;
    }
  }
}
process.exitCode = problems > 0 ? 1 : 0;
