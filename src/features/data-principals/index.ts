// Data principals acting for themselves: the feature's only public surface.
import type { FastifyInstance } from 'fastify';
import type { AccessDeps } from '../../platform/auth/access.js';
import { dataPrincipalRoutes } from './routes.js';
import { createDataPrincipalService, type DataPrincipalServiceDeps } from './service.js';

export {
  createDataPrincipalService,
  contactPersonOf,
  maskEmail,
  rightsCenterUrl,
  CODE_TTL_SECONDS,
  type DataPrincipalService,
  type ContactPersonInput,
} from './service.js';
export { PRINCIPAL_CTE, queueTicketNotice, type ContactPersonRow } from './repo.js';

/** The organization's contact person (DPDP Rule 9) as the consent page and the Rights Center show them. */
export type ContactPerson = Pick<import('./repo.js').ContactPersonRow, 'full_name' | 'email' | 'phone' | 'working_hours' | 'response_time'>;
export { ContactPerson, Dpo, CodeRequestBody, CodeVerifyBody, type CodeRequestInput, type CodeVerifyInput } from './schemas.js';
export { codeMessage } from './routes.js';

export function registerDataPrincipals(
  app: FastifyInstance,
  deps: DataPrincipalServiceDeps & Pick<AccessDeps, 'organizations' | 'baseDomain' | 'trustProxy'>,
) {
  const service = createDataPrincipalService(deps);
  dataPrincipalRoutes(app, service, deps);
  return service;
}
