import { Migration } from '@mikro-orm/migrations';

export class Migration20261122060754 extends Migration {

  override name = 'Migration20261122060754';

  override up(): void | Promise<void> {
    this.addSql(`alter table "outbox_event" add "target" text null;`);

    this.addSql(`alter table "webhook_endpoint" add "kind" varchar(10) not null default 'endpoint';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "outbox_event" drop column "target";`);

    this.addSql(`alter table "webhook_endpoint" drop column "kind";`);
  }

}
