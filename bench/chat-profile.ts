import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// Where a `node --cpu-prof` profile of the service spent its time, by self time: the functions
// and the packages (or dist/ folders) they belong to. Idle time is left out of the shares.

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A package under node_modules, a dist/ folder two levels deep, a node: module folder, or V8's own entries. */
function areaOf(url: string, functionName: string): string {
  if (url === '') return functionName;
  const packageAt = url.lastIndexOf('/node_modules/');
  if (packageAt !== -1) {
    const parts = url.slice(packageAt + '/node_modules/'.length).split('/');
    return parts[0]?.startsWith('@') === true ? `${parts[0]}/${parts[1] ?? ''}` : (parts[0] ?? url);
  }
  const distAt = url.indexOf('/dist/');
  if (distAt !== -1) return url.slice(distAt + 1).split('/').slice(0, 3).join('/').replace(/\.js$/, '');
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  return url;
}

function top(totals: Map<string, number>, count: number, busy: number): string[] {
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, micros]) => `| ${name.replace(/\|/g, '\\|')} | ${((micros / busy) * 100).toFixed(1)} % |`);
}

export function printHotSpots(profileDir: string): void {
  const file = readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'));
  if (file === undefined) {
    console.log(`No CPU profile in ${profileDir}.`);
    return;
  }
  const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as CpuProfile;
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, index) => {
    const frame = frames.get(id);
    const micros = profile.timeDeltas[index] ?? 0;
    if (frame === undefined || frame.functionName === '(idle)') return;
    busy += micros;
    const where = frame.url === '' ? '' : ` ${areaOf(frame.url, '')}:${frame.lineNumber + 1}`;
    const fn = `${frame.functionName || '(anonymous)'}${where}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + micros);
    const area = areaOf(frame.url, frame.functionName);
    byArea.set(area, (byArea.get(area) ?? 0) + micros);
  });
  console.log(`\nService CPU profile: ${join(profileDir, file)} (${(busy / 1000).toFixed(0)} ms busy)`);
  console.log(['', '| self time by package or folder | share of busy time |', '|---|---|', ...top(byArea, 20, busy)].join('\n'));
  console.log(['', '| self time by function | share of busy time |', '|---|---|', ...top(byFunction, 25, busy)].join('\n'));
}
