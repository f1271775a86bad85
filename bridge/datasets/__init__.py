"""Datasets: many logged states between libraries' layouts, their dynamics labels, files and scale.

The public functions (also at the top level, ``bridge.convert_states``, ...):

* :func:`~bridge.datasets.convert.convert_states`: arrays of states (numpy or Dask) from one
  convention's ``(q, v, a, tau)`` layout to another's;
* :func:`~bridge.datasets.labels.compute`: batched dynamics labels (inverse dynamics, M, h, frame
  poses and Jacobians, ...) of many states;
* :func:`~bridge.datasets.pipeline.convert_dataset`: an NPZ, CSV or Parquet file of states
  converted and labelled into another, block by block, on this machine or a Dask cluster;
* :func:`~bridge.datasets.convert.state_columns`: the column names of a convention's layout.

The modules, one concept each: ``layout`` (where each coordinate sits and what it means),
``columns`` (the naming scheme, matching a file's columns), ``configuration`` (configurations
between layouts, their checks), ``base_change`` (the base block of the change of variables on
columns), ``plan`` (one model's conversion between two conventions), ``convert`` (the arrays API),
``labels`` (the quantities), ``chunks`` (the unit of work), ``distributed`` (Dask), ``tables``,
``npz_files``, ``csv_files``, ``parquet_files`` (the formats), ``atomic`` (atomic outputs),
``pipeline`` (files). Dask and pyarrow (extra ``[datasets]``) are imported inside functions only.
"""
