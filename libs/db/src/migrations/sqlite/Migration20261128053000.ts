import { Migration } from '@mikro-orm/migrations';

/** Captions' URL memory (issue 32): the validators an audioUrl's server gave when the worker read it. */
export class Migration20261128053000 extends Migration {

  override name = 'Migration20261128053000';

  override up(): void | Promise<void> {
    this.addSql(`alter table \`transcription\` add column \`url_validators\` json null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table \`transcription\` drop column \`url_validators\`;`);
  }

}
