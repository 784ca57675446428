import { Asset } from '#libs/assets';
import { DevMessage, Membership, OtpCode, RefreshToken, User } from '#libs/auth';
import { SpeechRecognition, Transcription } from '#libs/captions';
import type { AppConfig } from '#libs/core';
import { CreditBalance, LedgerEntry } from '#libs/credits';
import { openDatabase, ormOptions, type Orm } from '#libs/db';
import { OutboxEvent } from '#libs/events';
import { IntegrationConnection } from '#libs/integrations';
import { ApiKey } from '#libs/keys';
import { CampaignRecipient, MessagingCampaign, MessagingContact, MessagingMessage } from '#libs/messaging';
import { Render } from '#libs/renders';
import { Template } from '#libs/templates';
import { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from '#libs/webhooks';
import { Workflow, WorkflowRow, WorkflowRun } from '#libs/workflows';
import { Workspace } from '#libs/workspaces';

/**
 * The composition of the service's libs: what needs every feature at once. libs/db knows no feature
 * (features build their SQL on it), so the list of entities lives here.
 */

/** Every entity of the service; each feature lib owns its own. */
export const ENTITIES = [
  Workspace, ApiKey, User, Membership, OtpCode, RefreshToken, DevMessage, CreditBalance, LedgerEntry, OutboxEvent,
  WebhookEndpoint, WebhookDelivery, WebhookAttempt, Template, Render, Asset, IntegrationConnection,
  Transcription, SpeechRecognition, MessagingMessage, MessagingContact, MessagingCampaign, CampaignRecipient, Workflow, WorkflowRun, WorkflowRow,
] as const;

/** The service's database: every entity mapped, migrations applied (unless `migrate: false`). */
export function openAppDatabase(database: AppConfig['database'], opts: { migrate?: boolean } = {}): Promise<Orm> {
  return openDatabase(database, ENTITIES, opts);
}

/** The ORM options of the service's database (the migrations tool). */
export function appOrmOptions(database: AppConfig['database']) {
  return ormOptions(database, ENTITIES);
}
