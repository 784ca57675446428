import { Migration } from '@mikro-orm/migrations';

export class Migration20261122060753 extends Migration {

  override name = 'Migration20261122060753';

  override up(): void | Promise<void> {
    this.addSql(`alter table \`outbox_event\` add column \`target\` text null;`);

    this.addSql(`alter table \`webhook_endpoint\` add column \`kind\` text not null default 'endpoint';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table \`outbox_event\` drop column \`target\`;`);

    this.addSql(`alter table \`webhook_endpoint\` drop column \`kind\`;`);
  }

}
