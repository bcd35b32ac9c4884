// Entry point of the dashboard bundle.
import { render } from 'preact';
import { App } from './app';

render(<App />, document.getElementById('app')!);
