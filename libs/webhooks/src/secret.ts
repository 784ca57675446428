import { randomToken } from '#libs/core';

const PREFIX = 'whsec_';

/** A signing secret: `whsec_` + 32 random bytes in base64url (decisions.md "Webhooks"). */
export function generateSecret(): string {
  return `${PREFIX}${randomToken(32)}`;
}

/** What is shown after creation: `whsec_...` + the secret's last four characters. */
export function secretHint(secret: string): string {
  return `${PREFIX}...${secret.slice(-4)}`;
}
