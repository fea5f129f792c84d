import { existsSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { renderRouteIndex, routeIndexPath, unresolvedProcedures } from '../../scripts/route-index.js';

// docs/ROUTES.md is generated from the router: a route added, moved or renamed without running
// `npx tsx scripts/route-index.ts` fails here.

it('docs/ROUTES.md is the index the router gives now', () => {
  expect(existsSync(routeIndexPath)).toBe(true);
  expect(readFileSync(routeIndexPath, 'utf8')).toBe(renderRouteIndex());
});

it('every procedure is traced to a file that exists', () => {
  expect(unresolvedProcedures()).toEqual([]);
});
