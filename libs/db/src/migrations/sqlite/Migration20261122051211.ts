import { Migration } from '@mikro-orm/migrations';

export class Migration20261122051211 extends Migration {

  override name = 'Migration20261122051211';

  override up(): void | Promise<void> {
    this.addSql(`create index \`webhook_delivery_workspace_id_created_at_index\` on \`webhook_delivery\` (\`workspace_id\`, \`created_at\`);`);
    this.addSql(`create index \`webhook_delivery_state_created_at_index\` on \`webhook_delivery\` (\`state\`, \`created_at\`);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index \`webhook_delivery_workspace_id_created_at_index\`;`);
    this.addSql(`drop index \`webhook_delivery_state_created_at_index\`;`);
  }

}
