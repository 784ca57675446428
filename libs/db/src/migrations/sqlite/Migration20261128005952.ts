import { Migration } from '@mikro-orm/migrations';

export class Migration20261128005952 extends Migration {

  override name = 'Migration20261128005952';

  override up(): void | Promise<void> {
    this.addSql(`alter table \`render\` add column \`preview\` integer not null default false;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table \`render\` drop column \`preview\`;`);
  }

}
