// node-redis's clientSideCache against a server (argv[2] = port): reads are
// cached, a write by another client invalidates them, a FLUSHALL empties the
// cache. Prints what it saw as one JSON line; exits non-zero on an error.
import { createClient, BasicClientSideCache } from 'redis';

const port = Number(process.argv[2]);
const mode = process.argv[3] ?? 'PLAIN';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(pred) {
  for (let i = 0; i < 200 && !pred(); i++) await sleep(10);
  return pred();
}

const cache = new BasicClientSideCache({ trackingMode: mode });
const cached = createClient({ socket: { host: '127.0.0.1', port, connectTimeout: 5000 }, RESP: 3, clientSideCache: cache });
const writer = createClient({ socket: { host: '127.0.0.1', port, connectTimeout: 5000 } });
cached.on('error', (e) => { console.error('cached client error', e); process.exit(2); });
writer.on('error', (e) => { console.error('writer error', e); process.exit(2); });
await cached.connect();
await writer.connect();
await writer.set('csc:a', '1');
const seen = {};
seen.first = await cached.get('csc:a');
seen.second = await cached.get('csc:a');
seen.afterReads = { size: cache.size(), hits: cache.stats().hitCount, misses: cache.stats().missCount };
await writer.set('csc:a', '2');
seen.invalidated = await waitFor(() => cache.size() === 0);
seen.third = await cached.get('csc:a');
await cached.get('csc:a');
await writer.flushAll();
seen.flushed = await waitFor(() => cache.size() === 0);
seen.fourth = await cached.get('csc:a');
seen.final = { hits: cache.stats().hitCount, misses: cache.stats().missCount };
console.log(JSON.stringify(seen));
await cached.quit();
await writer.quit();
