// The environment read once into a Config: defaults, and an error that names the variable and the
// expected form for every bad value. PGLITE_SHARED_BUFFERS also reaches the embedded engine.
import { expect, test } from 'vitest';
import { ConfigError, DEFAULT_PGLITE_SHARED_BUFFERS, loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/platform/db/open.js';

test('defaults: port 3000, localhost, the embedded store in ./data, RLS on, 32MB of PGlite buffers', () => {
  const config = loadConfig({});
  expect(config.port).toBe(3000);
  expect(config.baseDomain).toBe('localhost');
  expect(config.databaseUrl).toBeNull();
  expect(config.rls).toBe(true);
  expect(config.pgliteSharedBuffers).toBe(DEFAULT_PGLITE_SHARED_BUFFERS);
  expect(DEFAULT_PGLITE_SHARED_BUFFERS).toBe('32MB');
});

test.each([
  ['PORT', '70000', /PORT must be an integer between 0 and 65535/],
  ['DATABASE_URL', 'mysql://x', /DATABASE_URL must start with postgres:\/\//],
  ['ASSENT_RLS', 'maybe', /ASSENT_RLS must be "on" or "off"/],
  ['PGLITE_SHARED_BUFFERS', '32', /PGLITE_SHARED_BUFFERS must be a size such as "32MB" \(kB, MB or GB\), got "32"/],
  ['PGLITE_SHARED_BUFFERS', '0MB', /PGLITE_SHARED_BUFFERS must be a size/],
  ['PGLITE_SHARED_BUFFERS', '64MB; drop table x', /PGLITE_SHARED_BUFFERS must be a size/],
])('%s=%s is refused with a message that says what to set', (name, value, message) => {
  expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  expect(() => loadConfig({ [name]: value })).toThrow(message);
});

test('PGLITE_SHARED_BUFFERS is what the embedded engine runs with', async () => {
  const config = loadConfig({ PGLITE_SHARED_BUFFERS: '16MB' });
  const db = await openDatabase({ databaseUrl: null, dataDir: 'memory://', sharedBuffers: config.pgliteSharedBuffers });
  try {
    expect(await db.system.query('show shared_buffers')).toEqual([{ shared_buffers: '16MB' }]);
  } finally {
    await db.close();
  }
});
