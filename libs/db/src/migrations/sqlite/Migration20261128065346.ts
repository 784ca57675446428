import { Migration } from '@mikro-orm/migrations';

/**
 * A message's allowance month (issue 28): `allowance_at`, its creation, or its campaign's acceptance
 * for a campaign's message. Rows before it are dated by their creation. SQLite adds a NOT NULL column
 * only with a default: 0, replaced at once.
 */
export class Migration20261128065346 extends Migration {

  override name = 'Migration20261128065346';

  override up(): void | Promise<void> {
    this.addSql(`alter table \`messaging_message\` add column \`allowance_at\` datetime not null default 0;`);
    this.addSql(`update \`messaging_message\` set \`allowance_at\` = \`created_at\`;`);
    this.addSql(`create index \`messaging_message_workspace_id_allowance_at_index\` on \`messaging_message\` (\`workspace_id\`, \`allowance_at\`);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index \`messaging_message_workspace_id_allowance_at_index\`;`);
    this.addSql(`alter table \`messaging_message\` drop column \`allowance_at\`;`);
  }

}
