# expect: invalid line=4
def plan():
	walk('kitchen')
	assert('close' to 'unicorn')
		else: find('lime')
