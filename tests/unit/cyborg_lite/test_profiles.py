import pytest

from cyborg_lite import exception
from cyborg_lite import profiles


def test_normalize_strips_names():
    group = profiles.normalize_group({'resources: FPGA ': '1',
                                      'trait: CUSTOM_X': 'required',
                                      'accel:bitstream_id': 'abc'})
    assert group == {'resources:FPGA': '1', 'trait:CUSTOM_X': 'required',
                     'accel:bitstream_id': 'abc'}


@pytest.mark.parametrize('group', [
    {'foo:FPGA': '1'},
    {'resources:MEMORY_MB': '1'},
    {'resources:FPGA': 'one'},
    {'resources:FPGA': '0'},
    {'resources:FPGA': '1', 'trait:HW_CPU_X86_AVX': 'required'},
    {'resources:FPGA': '1', 'trait:CUSTOM_X': 'preferred'},
    {'trait:CUSTOM_X': 'required'},
    {'resources:CUSTOM_bad-name': '1'},
])
def test_invalid_groups(group):
    with pytest.raises(exception.Invalid):
        profiles.normalize_group(group)


def test_no_groups():
    with pytest.raises(exception.Invalid):
        profiles.normalize_groups([])


def test_arqs_per_profile_are_bounded():
    most = profiles.MAX_ARQS_PER_PROFILE
    profiles.normalize_groups([{'resources:FPGA': str(most - 2)},
                               {'resources:FPGA': '1',
                                'trait:CUSTOM_FPGA_XILINX': 'required'}])
    with pytest.raises(exception.Invalid):
        profiles.normalize_groups([{'resources:FPGA': str(most - 1)},
                                   {'resources:FPGA': '1',
                                    'trait:CUSTOM_FPGA_XILINX': 'required'}])


@pytest.mark.parametrize('group, count', [
    ({'resources:FPGA': '1'}, 1),
    ({'resources:FPGA': '2', 'resources:CUSTOM_Y': '1'}, 3),
    ({'resources:FPGA': '2', 'trait:CUSTOM_FPGA_XILINX': 'required'}, 4),
    ({'resources:FPGA': '1', 'trait:CUSTOM_FPGA_XILINX': 'forbidden'}, 1),
])
def test_arq_count(group, count):
    assert profiles.arq_count(group) == count


def test_bitstream():
    assert profiles.bitstream_id({'accel:bitstream_id': 'x'}) == 'x'
    assert profiles.bitstream_id({'resources:FPGA': '1'}) is None
