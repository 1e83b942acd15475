/** The dashboard's entry: styles, then the app into `#app`. */
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { render } from 'preact';
import { App } from './app/app.tsx';

const root = document.getElementById('app');
if (root) render(<App />, root);
