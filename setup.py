from glob import glob

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

package_name = "fric"


class BuildExt(build_ext):
    """Build the optional C kernels with contraction of a*b+c into FMA off (bit-identical to the
    Python reference kernels they are tested against) and without fast-math."""

    def build_extensions(self):
        if self.compiler.compiler_type == "unix":
            for ext in self.extensions:
                ext.extra_compile_args = ["-ffp-contract=off", "-fno-fast-math"]
        super().build_extensions()


# The compiled single-contact step of the reduced planar model, and the compiled step of the
# MuJoCo FrictionStepper (not linked against MuJoCo: it gets MuJoCo's function addresses at run
# time); optional: without a C compiler the install goes on and fric_core.planar.reduced_fast
# and fric_core.mujoco.FrictionStepper use their Python / numpy steps.
ext_modules = [Extension("fric_core.planar._reduced_kernel", ["fric_core/planar/_reduced_kernel.c"],
                         optional=True),
               Extension("fric_core._mujoco_kernel", ["fric_core/_mujoco_kernel.c"],
                         optional=True)]

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*", "examples", "bench"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        ("share/" + package_name + "/launch", glob("launch/*.launch.xml") + glob("launch/*.py")),
        ("share/" + package_name + "/config", glob("config/*.yaml") + glob("config/*.rviz")),
        ("share/" + package_name + "/config/ros2_control", glob("config/ros2_control/*.yaml")),
        ("share/" + package_name + "/urdf", glob("urdf/*.urdf")),
    ],
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExt},
    python_requires=">=3.11",
    # rosbags: reading ROS 2 bags offline for identification (pure Python, no ROS install);
    # pin (Pinocchio): URDF rigid-body dynamics for the transmission arms
    install_requires=["numpy", "scipy", "matplotlib", "pyserial", "rosbags", "pin", "pyyaml"],
    extras_require={
        # ROS 2 kilted for Python 3.11 from PyPI; a colcon build uses package.xml instead.
        "ros": [
            "ros-rclpy",
            "ros-rmw-fastrtps-cpp",
            "ros-sensor-msgs",
            "ros-std-msgs",
            "ros-geometry-msgs",
            "ros-visualization-msgs",
            "ros-diagnostic-msgs",
            "ros-std-srvs",
            "ros-rcl-interfaces",
            "ros-trajectory-msgs",
        ],
        "dev": ["pytest", "ruff", "colcon-core", "colcon-ros", "colcon-python-setup-py"],
        # MuJoCo with fric's exact joint friction (fric_core.mujoco.FrictionStepper)
        "mujoco": ["mujoco>=4.0,<5"],
        # fric fleet's Parquet tables (fric_core.fleet.table); without it: --no-parquet, CSV
        "fleet": ["pyarrow>=14"],
        # fric fleet --ray: one Ray task per recording (fric_nodes.tools.fleet_runner only);
        # ray core pulls click, filelock, jsonschema, msgpack, protobuf, requests (~240 MB)
        "ray": ["ray>=2.9"],
    },
    entry_points={
        "console_scripts": [
            "fric = fric_nodes.tools.cli:main",
            "friction_renderer = fric_nodes.friction_renderer:main",
            "haptic_stage = fric_nodes.haptic_stage:main",
            "haptic_loop = fric_nodes.haptic_loop:main",
            "friction_identifier = fric_nodes.friction_identifier:main",
            "transmission_sim = fric_nodes.transmission_sim:main",
            "mujoco_sim = fric_nodes.mujoco_sim:main",
            "fric_recorder = fric_nodes.recorder:main",
            "friction_compensator = fric_nodes.friction_compensator:main",
            "trajectory_tracker = fric_nodes.trajectory_tracker:main",
        ],
    },
    zip_safe=True,
    maintainer="fric maintainers",
    maintainer_email="fric@example.invalid",
    description="Physically correct friction for ROS 2 joints and haptic devices",
    license="Apache-2.0",
)
