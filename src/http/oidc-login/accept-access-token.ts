import type { User } from '../../core/auth/permissions.js';
import { AppError } from '../../core/errors/app-error.js';
import type { LoginContext } from './login-context.js';

/**
 * Runs the new access token through the same check every API request makes. That tells the
 * browser's user who they are, proves the provider issues tokens this service accepts (a wrong
 * OIDC_AUDIENCE shows at sign-in rather than as 401s later), and records the `auth` audit entry
 * the token's session causes (`login` for a new session, `refresh` for a new token in a known
 * one) exactly once: the SPA's later API calls with the same token find it already recorded.
 */
export async function acceptAccessToken(context: LoginContext, accessToken: string, ip: string): Promise<User> {
  try {
    return await context.deps.auth.identify(accessToken, ip);
  } catch (error) {
    if (error instanceof AppError && error.code === 'UNAUTHORIZED') {
      const reason = error.details.reason;
      context.deps.logger.warn({ reason }, 'the identity provider issued an access token this service refuses; check OIDC_AUDIENCE and OIDC_CLIENT_ID');
      throw new AppError('INTERNAL_ERROR', 'The identity provider issued an access token this service does not accept; check OIDC_AUDIENCE', { details: { reason } });
    }
    throw error;
  }
}
