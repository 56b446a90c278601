// Organizations and API keys: the feature's only public surface.
export { createAccountsService, SCOPES, type AccountsService, type ApiKeyRecord, type OrganizationRecord } from './service.js';
export { slugProblem, RESERVED_SLUGS } from './slugs.js';
