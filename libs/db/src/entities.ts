import { DevMessage, Membership, OtpCode, RefreshToken, User } from '#libs/auth';
import { CreditBalance, LedgerEntry } from '#libs/credits';
import { OutboxEvent } from '#libs/events';
import { ApiKey } from '#libs/keys';
import { Render } from '#libs/renders';
import { Template } from '#libs/templates';
import { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from '#libs/webhooks';
import { Workspace } from '#libs/workspaces';

/** Every entity of the service; each feature lib owns its own. */
export const ENTITIES = [
  Workspace, ApiKey, User, Membership, OtpCode, RefreshToken, DevMessage, CreditBalance, LedgerEntry, OutboxEvent,
  WebhookEndpoint, WebhookDelivery, WebhookAttempt, Template, Render,
] as const;
