import { defineConfig } from 'vitest/config';

// Every suite runs on the embedded store (PGlite); when TEST_DATABASE_URL is set, again on PostgreSQL.
const stores = ['pglite', ...(process.env.TEST_DATABASE_URL ? ['postgres'] : [])];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['test/support/global-setup.ts'],
    projects: stores.map((store) => ({
      extends: true,
      test: { name: store, env: { ASSENT_TEST_STORE: store }, include: ['test/**/*.test.ts'] },
    })),
  },
});
