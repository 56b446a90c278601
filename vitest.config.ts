import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

// Every suite under test/ runs on the embedded store (PGlite); when TEST_DATABASE_URL is set, again on
// PostgreSQL. The dashboard's component tests (web/src) touch no data and run once, in jsdom.
const stores = ['pglite', ...(process.env.TEST_DATABASE_URL ? ['postgres'] : [])];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['test/support/global-setup.ts'],
    projects: [
      ...stores.map((store) => ({
        extends: true as const,
        test: { name: store, env: { ASSENT_TEST_STORE: store }, include: ['test/**/*.test.ts'] },
      })),
      {
        extends: true as const,
        plugins: [react()],
        test: { name: 'web', environment: 'jsdom', include: ['web/src/**/*.test.tsx'], setupFiles: ['web/src/test-setup.ts'] },
      },
    ],
  },
});
