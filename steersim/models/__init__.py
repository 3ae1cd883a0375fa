"""Protocol models of real steering systems, and a small teaching model. Each subpackage exports a
`SPEC` (`steersim.core.registry.ModelSpec`) registered under the `steersim.models` entry point group."""
