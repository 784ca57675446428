import { Migration } from '@mikro-orm/migrations';

/**
 * A message's allowance month (issue 28): `allowance_at`, its creation, or its campaign's acceptance
 * for a campaign's message. Rows before it are dated by their creation.
 */
export class Migration20261128065346 extends Migration {

  override name = 'Migration20261128065346';

  override up(): void | Promise<void> {
    this.addSql(`alter table "messaging_message" add "allowance_at" timestamptz null;`);
    this.addSql(`update "messaging_message" set "allowance_at" = "created_at";`);
    this.addSql(`alter table "messaging_message" alter column "allowance_at" set not null;`);
    this.addSql(`create index "messaging_message_workspace_id_allowance_at_index" on "messaging_message" ("workspace_id", "allowance_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "messaging_message_workspace_id_allowance_at_index";`);
    this.addSql(`alter table "messaging_message" drop column "allowance_at";`);
  }

}
