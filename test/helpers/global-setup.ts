import { prepareTemplate } from './database';

export default async function setup() {
  await prepareTemplate();
}
