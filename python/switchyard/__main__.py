"""python -m switchyard --includes | --include-dir | --cmakedir | --version"""

import argparse
import sys

import switchyard


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m switchyard", description=__doc__)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--includes", action="store_true", help="the compiler flag: -I<include folder>")
    group.add_argument("--include-dir", action="store_true", help="the include folder")
    group.add_argument("--cmakedir", action="store_true", help="the folder for -Dswitchyard_DIR=")
    group.add_argument("--version", action="store_true", help="the package version")
    args = parser.parse_args(argv)
    if args.includes:
        print(f"-I{switchyard.get_include()}")
    elif args.include_dir:
        print(switchyard.get_include())
    elif args.cmakedir:
        print(switchyard.get_cmake_dir())
    else:
        print(switchyard.__version__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
