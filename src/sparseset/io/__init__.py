"""Input and output: files, tables and the console.

- :mod:`.npz`: named arrays as one ``.npz`` file, written atomically, and
  :class:`FormatError`;
- :mod:`.parquet`: stores as Parquet files, worlds as Parquet directories;
- :mod:`.tabular`: containers to and from pyarrow and pandas;
- :mod:`.arrow_c`: integer columns read through the Arrow C interface;
- :mod:`.schema`: column schemas, shared by stores and files;
- :mod:`.console`: progress bars and plots for the command line.

pyarrow, pandas, tqdm and matplotlib are imported only inside the functions
that need them.
"""

from .npz import FormatError

__all__ = ["FormatError"]
