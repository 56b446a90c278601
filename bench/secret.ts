// The ASSENT_SECRET_KEY of every benchmark process: the servers bench/run.ts starts, the baseline and
// the seeding (which may create an organization's signing key on its first consent). One value, so a
// key sealed by one of them opens in the others. Never a production secret.
export const BENCH_SECRET_KEY = 'bench-secret-key-not-for-production-0123456789';
