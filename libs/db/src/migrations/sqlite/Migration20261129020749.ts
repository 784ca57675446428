import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 33: the first-attempts job a webhook delivery is carried by (several events a job); null for
 * rows before it, whose job was their event's.
 */
export class Migration20261129020749 extends Migration {

  override name = 'Migration20261129020749';

  override up(): void | Promise<void> {
    this.addSql(`alter table \`webhook_delivery\` add column \`job_id\` text null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table \`webhook_delivery\` drop column \`job_id\`;`);
  }

}
