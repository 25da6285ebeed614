# expect: invalid line=4
def plan():
	walk('kitchen')
	grab('unicorn')
