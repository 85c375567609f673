import { prepareTemplate, removeTemplate } from './database';

export default async function setup() {
  await prepareTemplate();
  return async () => removeTemplate();
}
