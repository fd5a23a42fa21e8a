// How a one-time password-reset link is shown to an operator (the first `npm start`, `npm run admin --
// reset-password`): the console's link, and the same request as a curl command for an install without it.
import { passwordResetLink } from '../services/accounts/password-resets';
import { PASSWORD_MIN_LENGTH } from '../security/passwords';

export function resetLinkLines(publicBaseUrl: string, token: string, expiresAt: Date, indent = ''): string[] {
  return [
    `${indent}One-time link that sets the password (used once, valid until ${expiresAt.toISOString()}):`,
    `${indent}  ${passwordResetLink(publicBaseUrl, token)}`,
    `${indent}or, the same without a browser (at least ${PASSWORD_MIN_LENGTH} characters):`,
    `${indent}  curl -X POST -H 'Content-Type: application/json' -d '{"password":"<new password>"}' \\`,
    `${indent}    ${publicBaseUrl}/api/password-resets/${token}`,
  ];
}
