import '@fontsource-variable/inter/wght.css';
import './styles.css';
import { render } from 'preact';
import { App } from './app';
import { registerServiceWorker } from './offline/register';

render(<App />, document.getElementById('app')!);
registerServiceWorker();
