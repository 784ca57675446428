import { Migration } from '@mikro-orm/migrations';

export class Migration20261128013000 extends Migration {

  override name = 'Migration20261128013000';

  override up(): void | Promise<void> {
    this.addSql(`alter table \`messaging_campaign\` add column \`mode\` text not null default 'live';`);

    this.addSql(`alter table \`messaging_message\` add column \`mode\` text not null default 'live';`);

    this.addSql(`alter table \`workflow\` add column \`mode\` text not null default 'live';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table \`messaging_campaign\` drop column \`mode\`;`);

    this.addSql(`alter table \`messaging_message\` drop column \`mode\`;`);

    this.addSql(`alter table \`workflow\` drop column \`mode\`;`);
  }

}
